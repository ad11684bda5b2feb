#include "optim/lr_schedule.h"

#include <cmath>

#include "core/internal_error.h"
#include "support/test_support.h"


namespace {

mtbert::ScheduleConfig schedule(const std::string& kind, double warmup_epochs, int64_t warmup_steps,
                                double final_lr) {
  mtbert::ScheduleConfig c;
  c.kind = *mtbert::enum_from_name<mtbert::ScheduleKind>(kind);
  c.warmup_epochs = warmup_epochs;
  c.warmup_steps = warmup_steps;
  c.final_lr = final_lr;
  return c;
}

}  // namespace

TEST_CASE("the reports' schedule: 1e-5 to 1e-7 after one warmup epoch", "[lr_schedule]") {
  // SST 534 + Quora split 1000 + STS 378 batches of 16 per epoch, 10 epochs.
  const int64_t per_epoch = 1912, total = 19120;
  const mtbert::LrSchedule s(schedule("linear", 1, 0, 1e-7), 1e-5, total, per_epoch);
  CHECK(s.warmup_steps() == 1912);
  CHECK(s.lr_at(0) == 0.0);
  CHECK(s.lr_at(1) == Approx(1e-5 / 1912).epsilon(1e-12));
  CHECK(s.lr_at(956) == Approx(0.5e-5).epsilon(1e-12));
  CHECK(s.lr_at(1911) == Approx(1e-5 * 1911 / 1912).epsilon(1e-12));
  CHECK(s.lr_at(1912) == Approx(1e-5).epsilon(1e-12));
  // Decay over 19119 - 1912 = 17207 steps; step 1912 + 17207/2 is halfway.
  CHECK(s.lr_at(1912 + 8603) == Approx(1e-5 + (1e-7 - 1e-5) * 8603.0 / 17207).epsilon(1e-12));
  CHECK(s.lr_at(19119) == Approx(1e-7).epsilon(1e-12));
  CHECK(s.lr_at(25000) == Approx(1e-7).epsilon(1e-12));
  int64_t not_positive = 0;
  for (int64_t step = 1; step < total; ++step) not_positive += s.lr_at(step) > 0 ? 0 : 1;
  CHECK(not_positive == 0);
}

TEST_CASE("linear schedule at its boundaries, warmup in steps", "[lr_schedule]") {
  // 10 warmup steps, 111 steps: the decay runs over steps 10..110 (100 steps).
  const mtbert::LrSchedule s(schedule("linear", 0, 10, 0.0), 2.0, 111, 50);
  CHECK(s.warmup_steps() == 10);
  CHECK(s.lr_at(0) == 0.0);
  CHECK(s.lr_at(5) == Approx(1.0));
  CHECK(s.lr_at(10) == Approx(2.0));
  CHECK(s.lr_at(60) == Approx(1.0));
  CHECK(s.lr_at(85) == Approx(0.5));
  CHECK(s.lr_at(110) == Approx(0.0).margin(1e-15));
}

TEST_CASE("cosine schedule decays to its floor", "[lr_schedule]") {
  const mtbert::LrSchedule s(schedule("cosine", 0, 10, 0.1), 1.1, 111, 50);
  CHECK(s.lr_at(0) == 0.0);
  CHECK(s.lr_at(10) == Approx(1.1));
  // progress 1/2: floor + (peak - floor)/2; progress 1/4: (1 + cos(pi/4))/2.
  CHECK(s.lr_at(60) == Approx(0.6));
  CHECK(s.lr_at(35) == Approx(0.1 + 1.0 * (1 + std::sqrt(0.5)) / 2));
  CHECK(s.lr_at(110) == Approx(0.1));
  CHECK(s.lr_at(200) == Approx(0.1));
}

TEST_CASE("constant schedule, with and without warmup", "[lr_schedule]") {
  const mtbert::LrSchedule flat(schedule("constant", 0, 0, 0.0), 3e-5, 100, 10);
  CHECK(flat.warmup_steps() == 0);
  for (const int64_t step : {0, 1, 50, 99}) CHECK(flat.lr_at(step) == 3e-5);
  const mtbert::LrSchedule warm(schedule("constant", 0.5, 0, 0.0), 3e-5, 100, 10);
  CHECK(warm.warmup_steps() == 5);
  CHECK(warm.lr_at(0) == 0.0);
  CHECK(warm.lr_at(4) == Approx(3e-5 * 4 / 5));
  CHECK(warm.lr_at(5) == 3e-5);
  CHECK(warm.lr_at(99) == 3e-5);
}

TEST_CASE("warmup epochs are rounded to steps and capped by the run", "[lr_schedule]") {
  CHECK(mtbert::LrSchedule(schedule("linear", 0.1, 0, 0.0), 1.0, 5000, 1000).warmup_steps() == 100);
  CHECK(mtbert::LrSchedule(schedule("linear", 0.3, 0, 0.0), 1.0, 5000, 1000).warmup_steps() == 300);
  CHECK(mtbert::LrSchedule(schedule("linear", 2, 0, 0.0), 1.0, 50, 100).warmup_steps() == 50);
  // No step left to decay over: the peak from the end of warmup on.
  const mtbert::LrSchedule short_run(schedule("linear", 0, 4, 0.0), 1.0, 5, 1);
  CHECK(short_run.lr_at(3) == Approx(0.75));
  CHECK(short_run.lr_at(4) == 1.0);
  CHECK(mtbert::LrSchedule(schedule("linear", 0, 0, 0.5), 1.0, 1, 1).lr_at(0) == 1.0);
}

TEST_CASE("the schedule is a pure function of the step", "[lr_schedule]") {
  const mtbert::LrSchedule a(schedule("cosine", 1, 0, 1e-7), 1e-5, 1000, 100);
  const mtbert::LrSchedule b(schedule("cosine", 1, 0, 1e-7), 1e-5, 1000, 100);
  CHECK(a.lr_at(700) == b.lr_at(700));
  const double later = a.lr_at(900);
  a.lr_at(3);
  CHECK(a.lr_at(900) == later);
  CHECK_THROWS_AS(a.lr_at(-1), mtbert::InternalError);
  CHECK_THROWS_AS(mtbert::LrSchedule(schedule("linear", 0, 0, 0), 1, 0, 1), mtbert::InternalError);
}
