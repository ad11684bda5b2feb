#include "core/autocast_scope.h"

#include <fstream>
#include <sstream>

#include <ATen/autocast_mode.h>

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
}  // namespace

WeightCastCache::WeightCastCache() {
  if (kept_weight_casts++ == 0) at::autocast::clear_cache();
}

WeightCastCache::~WeightCastCache() {
  if (--kept_weight_casts == 0) at::autocast::clear_cache();
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
