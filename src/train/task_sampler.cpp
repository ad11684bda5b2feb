#include "train/task_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "core/internal_error.h"

namespace mtbert {

namespace {

bool one_pass(SamplerKind kind) { return kind == SamplerKind::sequential || kind == SamplerKind::round_robin; }

// The generator of one epoch. std::seed_seq and std::mt19937_64 are specified
// exactly by the standard, so plans are the same on every platform (unlike
// std::discrete_distribution, whose algorithm is the library's choice).
std::mt19937_64 epoch_rng(uint64_t seed, int64_t epoch) {
  const auto e = static_cast<uint64_t>(epoch);
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(e),
                    static_cast<uint32_t>(e >> 32)};
  return std::mt19937_64(seq);
}

// Uniform in [0, 1) from the top 53 bits.
double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::vector<double> normalized_powers(const std::vector<SamplerTask>& tasks, double exponent) {
  std::vector<double> p;
  for (const auto& t : tasks) p.push_back(std::pow(static_cast<double>(t.examples), exponent));
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= total;
  return p;
}

}  // namespace

TaskSampler::TaskSampler(const SamplerConfig& config, std::vector<SamplerTask> tasks, int64_t epochs, uint64_t seed)
    : config_(config), tasks_(std::move(tasks)), epochs_(epochs), seed_(seed) {
  check_invariant(!tasks_.empty(), "TaskSampler: no tasks");
  check_invariant(epochs_ >= 1, "TaskSampler: epochs {} must be >= 1", epochs_);
  for (const auto& t : tasks_)
    check_invariant(t.examples >= 1 && t.batches_per_pass >= 1, "TaskSampler: task {} has {} examples in {} batches",
                    t.name, t.examples, t.batches_per_pass);
  check_invariant(!one_pass(config_.kind) || config_.steps_per_epoch == 0,
                  "TaskSampler: {} makes one pass per epoch; steps_per_epoch must be 0", enum_name(config_.kind));
}

int64_t TaskSampler::steps_per_epoch(const SamplerConfig& config, const std::vector<SamplerTask>& tasks) {
  if (config.steps_per_epoch > 0) return config.steps_per_epoch;
  int64_t sum = 0, max = 0;
  for (const auto& t : tasks) {
    sum += t.batches_per_pass;
    max = std::max(max, t.batches_per_pass);
  }
  return config.kind == SamplerKind::mixed ? max : sum;
}

double TaskSampler::anneal_alpha(int64_t epoch) const {
  // One epoch: nothing to anneal over, the first (proportional) epoch's alpha.
  if (epochs_ == 1) return 1.0;
  const double e = static_cast<double>(std::min(epoch, epochs_));
  return 1.0 - (1.0 - config_.anneal_min) * (e - 1.0) / static_cast<double>(epochs_ - 1);
}

std::vector<double> TaskSampler::probabilities(int64_t epoch) const {
  check_invariant(epoch >= 1, "TaskSampler: epoch {} must be >= 1", epoch);
  const SamplerKind kind = config_.kind;
  if (kind == SamplerKind::proportional) return normalized_powers(tasks_, 1.0);
  if (kind == SamplerKind::annealed) return normalized_powers(tasks_, anneal_alpha(epoch));
  if (kind == SamplerKind::temperature) return normalized_powers(tasks_, 1.0 / config_.temperature);
  if (kind == SamplerKind::mixed) return std::vector<double>(tasks_.size(), 1.0);
  std::vector<double> share;
  int64_t total = 0;
  for (const auto& t : tasks_) total += t.batches_per_pass;
  for (const auto& t : tasks_) share.push_back(static_cast<double>(t.batches_per_pass) / static_cast<double>(total));
  return share;
}

std::vector<std::vector<int64_t>> TaskSampler::plan_epoch(int64_t epoch) const {
  const std::vector<double> p = probabilities(epoch);
  const auto n_tasks = static_cast<int64_t>(tasks_.size());
  const int64_t steps = steps_per_epoch();
  std::vector<std::vector<int64_t>> plan;
  plan.reserve(static_cast<size_t>(steps));
  const SamplerKind kind = config_.kind;

  if (kind == SamplerKind::sequential) {
    for (int64_t t = 0; t < n_tasks; ++t)
      for (int64_t b = 0; b < tasks_[t].batches_per_pass; ++b) plan.push_back({t});
  } else if (kind == SamplerKind::round_robin) {
    std::vector<int64_t> left;
    for (const auto& t : tasks_) left.push_back(t.batches_per_pass);
    while (static_cast<int64_t>(plan.size()) < steps) {
      for (int64_t t = 0; t < n_tasks; ++t) {
        if (left[t] == 0) continue;
        --left[t];
        plan.push_back({t});
      }
    }
  } else if (kind == SamplerKind::mixed) {
    std::vector<int64_t> all(static_cast<size_t>(n_tasks));
    std::iota(all.begin(), all.end(), 0);
    plan.assign(static_cast<size_t>(steps), all);
  } else {
    std::vector<double> cumulative(p.size());
    std::partial_sum(p.begin(), p.end(), cumulative.begin());
    std::mt19937_64 rng = epoch_rng(seed_, epoch);
    for (int64_t s = 0; s < steps; ++s) {
      const double u = uniform(rng) * cumulative.back();
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      plan.push_back({std::min<int64_t>(it - cumulative.begin(), n_tasks - 1)});
    }
  }
  return plan;
}

}  // namespace mtbert
