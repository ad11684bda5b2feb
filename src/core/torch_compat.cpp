#include "core/torch_compat.h"

#include <ATen/autocast_mode.h>
#include <ATen/ATen.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include "core/internal_error.h"

namespace mtbert::compat {

at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const c10::optional<at::Tensor>& mask, double dropout_p) {
#if MTBERT_TORCH_AT_LEAST(2, 0)
  return at::scaled_dot_product_attention(q, k, v, mask, dropout_p, /*is_causal=*/false);
#else
  throw InternalError("fused attention needs LibTorch 2.0 or later (callers check kHasFusedAttention)");
#endif
}

void set_current_device(c10::Device device) {
  c10::impl::getDeviceGuardImpl(device.type())->setDevice(device);
}

#if MTBERT_TORCH_AT_LEAST(2, 4)

bool autocast_enabled(c10::DeviceType type) { return at::autocast::is_autocast_enabled(type); }
void set_autocast_enabled(c10::DeviceType type, bool enabled) { at::autocast::set_autocast_enabled(type, enabled); }
c10::ScalarType autocast_dtype(c10::DeviceType type) { return at::autocast::get_autocast_dtype(type); }
void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype) { at::autocast::set_autocast_dtype(type, dtype); }

#else

bool autocast_enabled(c10::DeviceType type) {
  return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}

void set_autocast_enabled(c10::DeviceType type, bool enabled) {
  if (type == c10::DeviceType::CUDA) at::autocast::set_enabled(enabled);
  else at::autocast::set_cpu_enabled(enabled);
}

c10::ScalarType autocast_dtype(c10::DeviceType type) {
  return type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
}

void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype) {
  if (type == c10::DeviceType::CUDA) at::autocast::set_autocast_gpu_dtype(dtype);
  else at::autocast::set_autocast_cpu_dtype(dtype);
}

#endif

void foreach_scale_(std::vector<at::Tensor>& tensors, const at::Tensor& factor) {
#if MTBERT_TORCH_AT_LEAST(2, 1)
  at::_foreach_mul_(tensors, factor);
#else
  for (auto& t : tensors) t.mul_(factor);
#endif
}

bool fused_adamw_(std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads, std::vector<at::Tensor>& exp_avgs,
                  std::vector<at::Tensor>& exp_avg_sqs, std::vector<at::Tensor>& steps, const at::Tensor& lr,
                  double beta1, double beta2, double weight_decay, double eps) {
#if MTBERT_TORCH_AT_LEAST(2, 1)
  if (!params.front().is_cuda()) return false;
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2, weight_decay,
                    eps, /*amsgrad=*/false, /*maximize=*/false);
  return true;
#else
  return false;
#endif
}

}  // namespace mtbert::compat
