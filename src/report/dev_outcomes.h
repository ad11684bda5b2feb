#pragma once
// What a finished run predicted on dev, example by example, beside the gold
// labels: its predictions/<task>-dev-output.csv (written from the best
// checkpoint, as summary.json's best.dev) read against the dev files its
// config.resolved.yaml names, with the same limit, subset and bad-row policy.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "data/task_spec.h"

namespace mtbert {

struct RunDevOutcome {
  TaskMetric metric = TaskMetric::accuracy;
  std::vector<std::string> ids;
  std::vector<double> gold;
  std::vector<double> predicted;
};

// Per task with a dev split. UserError naming the file for a missing dev or
// prediction file, or predictions that are not the dev file's examples in
// order.
std::map<std::string, RunDevOutcome> read_dev_outcomes(const std::filesystem::path& run_folder);

}  // namespace mtbert
