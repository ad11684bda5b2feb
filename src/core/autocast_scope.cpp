#include "core/autocast_scope.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include <ATen/autocast_mode.h>
#include <ATen/core/Tensor.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include "core/torch_compat.h"
#include "core/user_error.h"

namespace mtbert {

using compat::autocast_dtype;
using compat::autocast_enabled;
using compat::set_autocast_dtype;
using compat::set_autocast_enabled;

bool cpu_has_native_bf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream flags(line.substr(line.find(':') + 1));
    std::string flag;
    while (flags >> flag)
      if (flag == "avx512_bf16" || flag == "amx_bf16") return true;
    return false;  // every core lists the same flags
  }
  return false;
}

std::string bf16_emulation_warning(c10::Device device) {
  if (!device.is_cpu() || cpu_has_native_bf16()) return "";
  return "precision bf16 on a CPU without bf16 instructions (no avx512_bf16 or amx_bf16 in /proc/cpuinfo): "
         "LibTorch emulates the bf16 matrix products, about 40x slower than fp32 here; use precision: fp32";
}

namespace {
// How many WeightCastCache objects this thread holds.
thread_local int kept_weight_casts = 0;

struct KeptCast {
  at::Tensor source;  // held, so that no other tensor takes its address while kept
  int64_t version = 0;
  at::Tensor cast;
};
thread_local std::unordered_map<const c10::TensorImpl*, KeptCast> kept_casts;

void drop_kept_casts() {
  at::autocast::clear_cache();
  kept_casts.clear();
}
}  // namespace

WeightCastCache::WeightCastCache() {
  if (kept_weight_casts++ == 0) drop_kept_casts();
}

WeightCastCache::~WeightCastCache() {
  if (--kept_weight_casts == 0) drop_kept_casts();
}

bool weight_casts_kept() { return kept_weight_casts > 0; }

at::Tensor kept_weight_cast(const at::Tensor& w, c10::ScalarType dtype) {
  if (kept_weight_casts == 0) return {};
  KeptCast& kept = kept_casts[w.unsafeGetTensorImpl()];
  const bool needs_graph = at::GradMode::is_enabled() && w.requires_grad();
  const bool usable = kept.cast.defined() && kept.version == w._version() && kept.cast.scalar_type() == dtype &&
                      (kept.cast.requires_grad() || !needs_graph) &&
                      (!kept.cast.is_inference() || c10::InferenceMode::is_enabled());
  if (!usable) kept = {w, w._version(), w.to(dtype)};
  return kept.cast;
}

AutocastScope::AutocastScope(c10::Device device, bool enabled) : active_(enabled), type_(device.type()) {
  if (!active_) return;
  if (type_ != c10::DeviceType::CUDA && type_ != c10::DeviceType::CPU)
    throw UserError("precision: bf16 autocast runs on cpu and cuda devices only");
  previous_enabled_ = autocast_enabled(type_);
  previous_dtype_ = autocast_dtype(type_);
  set_autocast_dtype(type_, c10::ScalarType::BFloat16);
  set_autocast_enabled(type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The outermost scope drops autocast's cache of bf16 weight copies (the
  // optimizer step changes the weights before the next forward pass), unless
  // a WeightCastCache keeps them.
  if (at::autocast::decrement_nesting() == 0 && kept_weight_casts == 0) at::autocast::clear_cache();
  set_autocast_enabled(type_, previous_enabled_);
  set_autocast_dtype(type_, previous_dtype_);
}

}  // namespace mtbert
