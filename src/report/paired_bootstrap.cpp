#include "report/paired_bootstrap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/internal_error.h"
#include "core/portable_random.h"
#include "data/metrics.h"

namespace mtbert {

namespace {

// A row's metric on one draw of examples: every run scored, then averaged.
double row_metric(const TaskOutcomes& task, const std::vector<size_t>& draw) {
  std::vector<double> gold(draw.size()), predicted(draw.size());
  for (size_t i = 0; i < draw.size(); ++i) gold[i] = task.gold[draw[i]];
  double sum = 0;
  for (const auto& run : task.runs) {
    for (size_t i = 0; i < draw.size(); ++i) predicted[i] = run[draw[i]];
    sum += task_metric(task.metric, predicted, gold);
  }
  return sum / static_cast<double>(task.runs.size());
}

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
  for (const auto& [name, outcomes] : row) {
    const auto other = reference.find(name);
    if (other == reference.end()) continue;
    check_paired(name, outcomes, other->second);
    tasks.push_back(name);
  }
  const auto wanted = [&](const std::string& column) {
    return column == "overall" ? !tasks.empty() : std::find(tasks.begin(), tasks.end(), column) != tasks.end();
  };

  // difference[column][b]; b = samples is the full data (every example once).
  std::map<std::string, std::vector<double>> differences;
  std::mt19937_64 rng = seeded_generator(options.seed, 0);
  for (int64_t b = 0; b <= options.samples; ++b) {
    const bool full = b == options.samples;
    double overall_row = 0, overall_reference = 0;
    for (const auto& name : tasks) {
      const TaskOutcomes& r = row.at(name);
      const size_t n = r.gold.size();
      std::vector<size_t> draw(n);
      for (size_t i = 0; i < n; ++i) draw[i] = full ? i : static_cast<size_t>(uniform_below(rng, n));
      const double ours = row_metric(r, draw), theirs = row_metric(reference.at(name), draw);
      differences[name].push_back(ours - theirs);
      overall_row += normalized_metric(r.metric, ours);
      overall_reference += normalized_metric(r.metric, theirs);
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
