#include "core/duration.h"

#include <chrono>
#include <cstdint>

#include <fmt/format.h>

namespace mtbert {

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds < 0 ? 0 : seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace mtbert
