#pragma once
// Which task(s) each training step draws a batch from.
//
//   sequential    every batch of task 1, then of task 2, ... (one pass each)
//   round_robin   t1, t2, t3, t1, ...; a task whose pass is over drops out
//                 until the epoch ends (one pass each)
//   proportional  p_t ~ N_t
//   annealed      p_t ~ N_t^alpha, alpha = 1 - (1 - anneal_min) (e - 1)/(E - 1),
//                 e the epoch from 1 to E (Stickland & Murray: anneal_min 0.2)
//   temperature   p_t ~ N_t^(1/T)
//   mixed         one batch of every task each step, losses summed
//
// N_t is the number of training examples of task t. Steps per epoch: the sum
// of the tasks' batches per pass (the max, for mixed) unless configured
// (proportional, annealed, temperature, mixed; sequential and round_robin
// always make one pass). The sampled kinds draw each step's task
// independently. The plan of an epoch is a pure function of (seed, epoch),
// the same on every platform: resuming regenerates it and skips to the saved
// step.
//
// Annealing runs over the `epochs` given (E): with E = 1 there is nothing to
// anneal over and alpha stays 1 (proportional); epochs after E keep alpha at
// anneal_min. Every task needs at least one example and one batch.
#include <cstdint>
#include <string>
#include <vector>

#include "config/experiment_config.h"

namespace mtbert {

struct SamplerTask {
  std::string name;
  int64_t examples = 0;
  int64_t batches_per_pass = 0;
};

class TaskSampler {
 public:
  TaskSampler(const SamplerConfig& config, std::vector<SamplerTask> tasks, int64_t epochs, uint64_t seed);

  int64_t steps_per_epoch() const { return steps_per_epoch(config_, tasks_); }
  // The same before a sampler exists: it needs the number of epochs, which
  // may follow from the steps per epoch (max_steps with epochs 0).
  static int64_t steps_per_epoch(const SamplerConfig& config, const std::vector<SamplerTask>& tasks);

  // The sampling probabilities of each task in `epoch` (1-based), in task
  // order; for sequential and round_robin, the share of the epoch's steps;
  // for mixed, 1 for every task (each step has a batch of each).
  std::vector<double> probabilities(int64_t epoch) const;

  // The tasks of every step of `epoch` (1-based): one per step, or all of them
  // for mixed. Deterministic in (seed, epoch).
  std::vector<std::vector<int64_t>> plan_epoch(int64_t epoch) const;

  // The exponent of annealed sampling in `epoch` (1-based).
  double anneal_alpha(int64_t epoch) const;

 private:
  SamplerConfig config_;
  std::vector<SamplerTask> tasks_;
  int64_t epochs_;
  uint64_t seed_;
};

}  // namespace mtbert
