#pragma once
// How sure a difference between two table rows is: a paired bootstrap over
// dev examples. Both rows predicted the same dev examples (each with every
// one of its runs, usually its seeds); each bootstrap sample draws the
// examples of every task with replacement, scores both rows on that same
// draw (every run's metric, averaged over the row's runs) and records the
// difference. The 2.5th and 97.5th percentiles of the recorded differences
// bound the 95% interval. Pairing the examples removes the variance the two
// rows share (which examples happen to be in dev), so the interval says what
// the rows' difference is worth on data like dev; the seeds' variance enters
// through the average over runs.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "data/task_spec.h"

namespace mtbert {

// One task's dev examples as one row saw them.
struct TaskOutcomes {
  TaskMetric metric = TaskMetric::accuracy;
  std::vector<double> gold;               // per example
  std::vector<std::vector<double>> runs;  // runs[k][i]: run k's prediction of example i
};

struct BootstrapDifference {
  double estimate = 0;  // the row's metric minus the reference's, on all examples
  double low = 0;       // the interval's bounds
  double high = 0;
  bool contains_zero() const { return low <= 0.0 && 0.0 <= high; }
};

struct BootstrapOptions {
  int64_t samples = 2000;
  double confidence = 0.95;
  uint64_t seed = 0;
};

// The metric of predictions against gold: accuracy of the predictions rounded
// to the nearest class, or Pearson's r.
double task_metric(TaskMetric metric, const std::vector<double>& predicted, const std::vector<double>& gold);

// Per column key (a task of both maps, or "overall": the mean of the tasks'
// normalized metrics, as summary.json's overall), the row's difference to
// the reference with its interval. The two rows' tasks must hold the same
// examples (InternalError otherwise: the caller aligned them by id).
std::map<std::string, BootstrapDifference> paired_bootstrap(const std::map<std::string, TaskOutcomes>& row,
                                                            const std::map<std::string, TaskOutcomes>& reference,
                                                            const std::vector<std::string>& columns,
                                                            const BootstrapOptions& options);

}  // namespace mtbert
