#pragma once
// Every difference between the LibTorch versions mtbert builds against, in one
// place: Debian 12's 1.13, Debian 13's 2.6, sid's 2.14 and pip's CUDA 2.x.
// The rest of the code calls what is here and holds no version #if of its own.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Optional.h>
#include <torch/version.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// Whether the LibTorch compiled against is at least MAJOR.MINOR.
#define MTBERT_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate lost its `const` in 2.3 (which also added the pure
// virtual copy_data): an allocator declares `c10::DataPtr allocate(size_t)
// MTBERT_ALLOCATE_CONST override;`.
#if MTBERT_TORCH_AT_LEAST(2, 3)
#define MTBERT_ALLOCATE_CONST
#else
#define MTBERT_ALLOCATE_CONST const
#endif

// The class whose allreduce/broadcast/allgather/barrier a Gloo or NCCL group
// implements: since 2.0 ProcessGroupGloo and ProcessGroupNCCL derive from
// c10d::Backend, before from c10d::ProcessGroup (only dist/communicator.cpp,
// which includes c10d's headers, names it).
#if MTBERT_TORCH_AT_LEAST(2, 0)
#define MTBERT_C10D_COLLECTIVES c10d::Backend
#else
#define MTBERT_C10D_COLLECTIVES c10d::ProcessGroup
#endif

namespace mtbert::compat {

// The key of parameter `p` in an optimizer's state() map: its TensorImpl's
// address printed as a string in LibTorch 1.13, the address itself in 2.x.
template <class StateMap>
typename StateMap::key_type optimizer_state_key(const StateMap&, const at::Tensor& p) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream key;
    key << static_cast<const void*>(p.unsafeGetTensorImpl());
    return key.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

// c10d::TCPStoreOptions gained useLibUV in 2.2, true by default from 2.4: a
// libuv server that Debian's LibTorch is built without ("use_libuv was
// requested but PyTorch was build without libuv support"). The classic
// server, the only one before, serves every LibTorch.
template <class Options, class = void>
struct HasUseLibUV : std::false_type {};
template <class Options>
struct HasUseLibUV<Options, std::void_t<decltype(std::declval<Options&>().useLibUV)>> : std::true_type {};
template <class Options>
void use_classic_tcp_store(Options& options) {
  if constexpr (HasUseLibUV<Options>::value) options.useLibUV = false;
}

// at::scaled_dot_product_attention (2.0 on): one fused attention kernel.
constexpr bool kHasFusedAttention = MTBERT_TORCH_AT_LEAST(2, 0);

// softmax(q k^T / sqrt(d) + mask) v, with dropout p, through the fused kernel;
// only where kHasFusedAttention (elsewhere it throws).
at::Tensor fused_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const c10::optional<at::Tensor>& mask, double dropout_p);

// Makes `device` the current one of its type (CUDA: what cudaSetDevice does),
// through c10's device guard interface, which needs no CUDA header.
void set_current_device(c10::Device device);

// Autocast's state per device type (2.4 replaced the per-backend calls, CUDA's
// set_enabled and set_cpu_enabled, by calls taking the device type).
bool autocast_enabled(c10::DeviceType type);
void set_autocast_enabled(c10::DeviceType type, bool enabled);
c10::ScalarType autocast_dtype(c10::DeviceType type);
void set_autocast_dtype(c10::DeviceType type, c10::ScalarType dtype);

// Multiplies each tensor of `tensors` in place by the 0-d tensor `factor`
// (on their device) without reading it on the host: one foreach call since
// 2.1 (which added the overload taking a tensor), a product per tensor
// before.
void foreach_scale_(std::vector<at::Tensor>& tensors, const at::Tensor& factor);

// AdamW's step over `params` (float, on one GPU, their step counts already
// advanced) through at::_fused_adamw_ with the LR a 0-d tensor on their
// device, which the kernel reads there: true where this LibTorch has that
// kernel (CUDA from 2.1); false, and nothing done, elsewhere. Not on the CPU,
// where the kernel (2.4 on) reads every step count with .item().
bool fused_adamw_(std::vector<at::Tensor>& params, std::vector<at::Tensor>& grads, std::vector<at::Tensor>& exp_avgs,
                  std::vector<at::Tensor>& exp_avg_sqs, std::vector<at::Tensor>& steps, const at::Tensor& lr,
                  double beta1, double beta2, double weight_decay, double eps);

}  // namespace mtbert::compat
