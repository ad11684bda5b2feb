#pragma once
// Learning-rate schedules as a pure function of the step, so that resuming
// needs no schedule state: constant; linear warmup then linear decay to a
// floor (the reports: 1e-5 down to 1e-7 after one warmup epoch); linear warmup
// then cosine decay to the floor.
//
// With W warmup steps (warmup_steps, or warmup_epochs * steps_per_epoch
// rounded; at most total_steps) and T total steps, the LR of step s is
//   s < W:  peak * s / W                      (HuggingFace's warmup: 0 at step 0)
//   then    constant: peak
//           linear:   peak + (final - peak) p
//           cosine:   final + (peak - final) (1 + cos(pi p)) / 2
// with p = (s - W) / (T - 1 - W), clamped to 1: the peak at step W, the
// floor exactly at the last step T - 1 (and after it). When no step is left
// to decay over (W >= T - 1), steps from W on get the peak.
#include <cstdint>

#include "config/experiment_config.h"

namespace mtbert {

class LrSchedule {
 public:
  // total_steps: optimizer steps in the whole run; steps_per_epoch converts
  // warmup_epochs to steps.
  LrSchedule(const ScheduleConfig& config, double peak_lr, int64_t total_steps, int64_t steps_per_epoch);

  // The learning rate of optimizer step `step` (0-based).
  double lr_at(int64_t step) const;

  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  ScheduleConfig config_;
  double peak_lr_;
  int64_t total_steps_;
  int64_t warmup_steps_;
};

}  // namespace mtbert
