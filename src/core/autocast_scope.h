#pragma once
// Mixed precision for a forward pass (`precision: bf16`): while a scope is
// alive, autocast runs the matrix products of `device`'s type in bfloat16;
// the parameters stay float32 (AdamW updates float32 master weights),
// autocast keeps LayerNorm, softmax and reductions in float32, and the heads
// compute losses and divergences in float32 (task_head.cpp). Backward runs
// after the scope, in the dtypes the forward pass chose, as PyTorch advises.
//
// Works on CUDA and on CPU (LibTorch's CPU autocast; useful on CPUs with
// bf16 instructions, and to test this path on machines without a GPU).
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace at {
class Tensor;
}

namespace mtbert {

// Whether this CPU has bf16 instructions (AVX512-BF16 or AMX-BF16, from
// /proc/cpuinfo). Without them LibTorch emulates bf16 matrix products, which
// measured ~40x slower than float32 on this project's 2-core machine.
bool cpu_has_native_bf16();

// The line to warn with when bf16 autocast on `device` would be emulated;
// empty when it would not.
std::string bf16_emulation_warning(c10::Device device);

class AutocastScope {
 public:
  // enabled false: a scope that changes nothing.
  AutocastScope(c10::Device device, bool enabled);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_;
  c10::DeviceType type_;
  bool previous_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Float;
};

// Keeps the bf16 copies of the float32 weights while it lives, across the
// AutocastScopes inside it, instead of dropping them when each scope ends: an
// evaluation pass or an optimizer step's forward passes (one per task) then
// cast each weight once, not once per batch or task. Two stores: the copies
// that the encoder's projections ask for (kept_weight_cast, below), which
// cover frozen weights and InferenceMode on every LibTorch, and autocast's
// own cache for any other product (leaves that require grad; LibTorch
// releases since mid-2025 skip it under InferenceMode). Both are dropped on
// construction too, so stale copies never leak in. Per thread, as autocast's
// state; nestable.
class WeightCastCache {
 public:
  WeightCastCache();
  ~WeightCastCache();
  WeightCastCache(const WeightCastCache&) = delete;
  WeightCastCache& operator=(const WeightCastCache&) = delete;
};

// Whether a WeightCastCache lives on this thread.
bool weight_casts_kept();

// The copy of the weight w in dtype that the innermost live WeightCastCache
// keeps (made on the first call), or an undefined tensor when none lives.
// A copy is made anew when w changed since (its version counter), when it
// was made without autograd and is now asked for with (a no-grad pass before
// a training one), or when it is an inference tensor asked for outside
// InferenceMode, so that a kept copy never gives other values or drops
// gradients.
at::Tensor kept_weight_cast(const at::Tensor& w, c10::ScalarType dtype);

}  // namespace mtbert
