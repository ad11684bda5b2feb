#include "ops/bf16_rows.h"

#include "core/vector_clones.h"

namespace mtbert::ops {

MTBERT_VECTOR_CLONES
void widen_bf16(const uint16_t* __restrict in, float* __restrict out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = bf16_to_float(in[j]);
}

MTBERT_VECTOR_CLONES
void narrow_to_bf16(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = float_to_bf16(in[j]);
}

}  // namespace mtbert::ops
