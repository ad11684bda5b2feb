#include "models/encoder_context.h"

#include <limits>

#include <ATen/Dispatch.h>

namespace mtbert {

torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask, torch::ScalarType dtype) {
  if (!attention_mask.defined()) return {};
  double lowest = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "attention_bias_from_mask", [&] {
    lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
  });
  auto keep = attention_mask.to(dtype).unsqueeze(1).unsqueeze(2);
  return (1.0 - keep) * lowest;
}

}  // namespace mtbert
