#pragma once
// bfloat16 rows to and from float, for the fused CPU units' mixed-precision
// paths (bf16 activations under autocast, float accumulation): a bf16 is the
// upper half of a float's bits, so widening is a shift and narrowing rounds
// to nearest even (NaN stays a quiet NaN), bit for bit what c10::BFloat16
// does. Written as integer loops that GCC vectorizes in the AVX2 / AVX-512
// clones: a conversion is a few instructions per element beside the kernels'
// polynomial work.
#include <cstdint>

#include <ATen/core/Tensor.h>

namespace mtbert::ops {

// The kernels convert a row a chunk at a time into stack buffers of this many
// floats, which stay in L1 with the row's other operands.
constexpr int64_t kBf16Chunk = 512;

__attribute__((always_inline)) inline float bf16_to_float(uint16_t h) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(h) << 16);
}

__attribute__((always_inline)) inline uint16_t float_to_bf16(float f) {
  const uint32_t bits = __builtin_bit_cast(uint32_t, f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return (bits & 0x7fffffffu) > 0x7f800000u ? uint16_t{0x7fc0} : static_cast<uint16_t>(rounded);
}

// A contiguous bf16 tensor's elements as the bits the row functions take.
inline const uint16_t* bf16_bits(const at::Tensor& t) {
  return reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>());
}
inline uint16_t* bf16_bits(at::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); }

// out[j] = in[j] widened / rounded, j < n.
void widen_bf16(const uint16_t* in, float* out, int64_t n);
void narrow_to_bf16(const float* in, uint16_t* out, int64_t n);

}  // namespace mtbert::ops
