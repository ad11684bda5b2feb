#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/internal_error.h"

namespace mtbert {

LrSchedule::LrSchedule(const ScheduleConfig& config, double peak_lr, int64_t total_steps, int64_t steps_per_epoch)
    : config_(config), peak_lr_(peak_lr), total_steps_(total_steps) {
  check_invariant(total_steps >= 1 && steps_per_epoch >= 0,
                  "LrSchedule: total_steps {} must be >= 1, steps_per_epoch {} >= 0", total_steps, steps_per_epoch);
  // Rounded rather than truncated: 0.1 epoch of 1000 steps is 100.00000000000001.
  const int64_t warmup = config.warmup_steps > 0
                             ? config.warmup_steps
                             : std::llround(config.warmup_epochs * static_cast<double>(steps_per_epoch));
  warmup_steps_ = std::min(warmup, total_steps);
}

double LrSchedule::lr_at(int64_t step) const {
  check_invariant(step >= 0, "LrSchedule: step {} is negative", step);
  // Warmup, as HuggingFace's schedules: 0 at step 0, then a straight line
  // that reaches the peak at step warmup_steps.
  if (step < warmup_steps_) return peak_lr_ * static_cast<double>(step) / static_cast<double>(warmup_steps_);
  if (config_.kind == ScheduleKind::constant) return peak_lr_;

  // Decay from the peak at the end of warmup to the floor at the last step
  // (total_steps - 1); with no step left to decay over, the peak.
  const int64_t decay_steps = total_steps_ - 1 - warmup_steps_;
  const double progress =
      decay_steps > 0 ? std::min(1.0, static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps))
                      : 0.0;
  const double floor = config_.final_lr;
  if (config_.kind == ScheduleKind::linear) return peak_lr_ + (floor - peak_lr_) * progress;
  return floor + (peak_lr_ - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace mtbert
