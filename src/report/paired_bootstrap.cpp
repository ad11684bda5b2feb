#include "report/paired_bootstrap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/internal_error.h"
#include "core/portable_random.h"
#include "data/metrics.h"

namespace mtbert {

namespace {

// A task's outcomes made ready for thousands of draws. Accuracy keeps each
// run's per-example hit, so a draw's accuracy is a count over the draw (the
// same integer count and division as accuracy()); Pearson's r gathers the
// draw into buffers reused across draws and calls pearson() itself. Both give
// task_metric's value to the bit, without its rounding and allocations per
// draw, which made a report with intervals take seconds.
class DrawScorer {
 public:
  explicit DrawScorer(const TaskOutcomes& task) : task_(task) {
    if (task.metric == TaskMetric::pearson) return;
    for (const auto& run : task.runs) {
      std::vector<uint8_t> hit(run.size());
      for (size_t i = 0; i < run.size(); ++i) hit[i] = std::llround(run[i]) == std::llround(task.gold[i]);
      hits_.push_back(std::move(hit));
    }
  }

  // The row's metric on one draw of examples: every run scored, then averaged.
  double row_metric(const std::vector<size_t>& draw) {
    double sum = 0;
    if (task_.metric == TaskMetric::pearson) {
      gold_.resize(draw.size());
      predicted_.resize(draw.size());
      for (size_t i = 0; i < draw.size(); ++i) gold_[i] = task_.gold[draw[i]];
      for (const auto& run : task_.runs) {
        for (size_t i = 0; i < draw.size(); ++i) predicted_[i] = run[draw[i]];
        sum += pearson(predicted_, gold_);
      }
    } else {
      for (const auto& hit : hits_) {
        int64_t correct = 0;
        for (const size_t i : draw) correct += hit[i];
        sum += draw.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(draw.size());
      }
    }
    return sum / static_cast<double>(task_.runs.size());
  }

 private:
  const TaskOutcomes& task_;
  std::vector<std::vector<uint8_t>> hits_;  // accuracy: hits_[k][i], run k right on example i
  std::vector<double> gold_, predicted_;    // Pearson: the draw's values
};

void check_paired(const std::string& name, const TaskOutcomes& row, const TaskOutcomes& reference) {
  const auto fail = [&](const std::string& what) {
    throw InternalError(fmt::format("paired_bootstrap: task {}: {}", name, what));
  };
  if (row.runs.empty() || reference.runs.empty()) fail("a row without runs");
  if (row.gold != reference.gold) fail("the rows' gold labels differ: the examples are not paired");
  if (row.metric != reference.metric) fail("the rows' metrics differ");
  for (const auto* outcomes : {&row, &reference})
    for (const auto& run : outcomes->runs)
      if (run.size() != row.gold.size()) fail(fmt::format("{} predictions for {} examples", run.size(), row.gold.size()));
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  // Linear interpolation between the closest ranks (numpy's default).
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (position - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

double task_metric(TaskMetric metric, const std::vector<double>& predicted, const std::vector<double>& gold) {
  if (metric == TaskMetric::pearson) return pearson(predicted, gold);
  std::vector<int64_t> p(predicted.size()), g(gold.size());
  for (size_t i = 0; i < predicted.size(); ++i) p[i] = std::llround(predicted[i]);
  for (size_t i = 0; i < gold.size(); ++i) g[i] = std::llround(gold[i]);
  return accuracy(p, g);
}

std::map<std::string, BootstrapDifference> paired_bootstrap(const std::map<std::string, TaskOutcomes>& row,
                                                            const std::map<std::string, TaskOutcomes>& reference,
                                                            const std::vector<std::string>& columns,
                                                            const BootstrapOptions& options) {
  check_invariant(options.samples >= 2, "paired_bootstrap: at least 2 samples, got {}", options.samples);
  std::vector<std::string> tasks;  // in both rows
  std::vector<DrawScorer> ours, theirs;  // per task of `tasks`
  for (const auto& [name, outcomes] : row) {
    const auto other = reference.find(name);
    if (other == reference.end()) continue;
    check_paired(name, outcomes, other->second);
    tasks.push_back(name);
    ours.emplace_back(outcomes);
    theirs.emplace_back(other->second);
  }
  const auto wanted = [&](const std::string& column) {
    return column == "overall" ? !tasks.empty() : std::find(tasks.begin(), tasks.end(), column) != tasks.end();
  };

  // difference[column][b]; b = samples is the full data (every example once).
  std::map<std::string, std::vector<double>> differences;
  std::mt19937_64 rng = seeded_generator(options.seed, 0);
  std::vector<size_t> draw;
  for (int64_t b = 0; b <= options.samples; ++b) {
    const bool full = b == options.samples;
    double overall_row = 0, overall_reference = 0;
    for (size_t t = 0; t < tasks.size(); ++t) {
      const TaskOutcomes& r = row.at(tasks[t]);
      const size_t n = r.gold.size();
      draw.resize(n);
      for (size_t i = 0; i < n; ++i) draw[i] = full ? i : static_cast<size_t>(uniform_below(rng, n));
      const double mine = ours[t].row_metric(draw), other = theirs[t].row_metric(draw);
      differences[tasks[t]].push_back(mine - other);
      overall_row += normalized_metric(r.metric, mine);
      overall_reference += normalized_metric(r.metric, other);
    }
    if (!tasks.empty()) differences["overall"].push_back((overall_row - overall_reference) / static_cast<double>(tasks.size()));
  }

  std::map<std::string, BootstrapDifference> out;
  const double tail = (1.0 - options.confidence) / 2.0;
  for (const auto& column : columns) {
    if (!wanted(column)) continue;
    std::vector<double> samples = differences.at(column);
    BootstrapDifference d;
    d.estimate = samples.back();
    samples.pop_back();
    d.low = percentile(samples, tail);
    d.high = percentile(samples, 1.0 - tail);
    out[column] = d;
  }
  return out;
}

}  // namespace mtbert
