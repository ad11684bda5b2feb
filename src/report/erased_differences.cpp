#include "report/erased_differences.h"

#include <algorithm>
#include <map>
#include <set>

#include "config/config_tree.h"
#include "config/experiment_config.h"
#include "sweep/sweep_expansion.h"
#include "train/run_directory.h"

namespace mtbert {

namespace {

using FlatConfig = std::map<std::string, std::string>;  // key path -> YAML flow text

void flatten(const ConfigNode& node, const std::string& prefix, FlatConfig& out) {
  if (!node.is_map()) {
    out[prefix] = yaml_flow_text(node);
    return;
  }
  for (const auto& [key, value] : node.entries) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
}

FlatConfig flat(const ConfigNode& root) {
  FlatConfig out;
  flatten(root, "", out);
  // What only names a run, or its seed (rows of several seeds differ in it).
  for (const char* key : {"name", "output_dir", "seed"}) out.erase(key);
  return out;
}

}  // namespace

std::vector<ErasedDifference> erased_differences(const ReportResult& result, const SweepSpec& sweep) {
  const std::vector<SweepRun> runs = expand_sweep(sweep, result.runs_root);
  std::vector<FlatConfig> intended, trained;  // per row with a trained run
  for (const auto& row : result.rows) {
    for (const auto& row_run : row.runs) {
      const auto resolved = RunDirectory(row_run.folder).resolved_config();
      if (!std::filesystem::is_regular_file(resolved)) continue;
      const auto run = std::find_if(runs.begin(), runs.end(), [&](const SweepRun& r) { return r.name == row_run.name; });
      if (run == runs.end()) continue;
      const ExperimentConfig config = load_experiment(run->experiment, run->overrides, {});
      intended.push_back(flat(parse_config_yaml(resolved_yaml(config), ConfigOrigin{run->experiment.string(), 0})));
      trained.push_back(flat(read_config_file(resolved)));
      break;  // one run per row: its seeds share the rest
    }
  }
  std::vector<ErasedDifference> erased;
  if (intended.size() < 2) return erased;
  for (const auto& [key, first] : intended[0]) {
    std::vector<std::string> values;
    bool varies = false, same_trained = true;
    for (size_t i = 0; i < intended.size(); ++i) {
      const auto own = intended[i].find(key);
      const auto got = trained[i].find(key);
      if (own == intended[i].end() || got == trained[i].end()) {
        same_trained = false;
        break;
      }
      if (own->second != first) varies = true;
      if (std::find(values.begin(), values.end(), own->second) == values.end()) values.push_back(own->second);
      if (got->second != trained[0].at(key)) same_trained = false;
    }
    if (varies && same_trained) erased.push_back({key, values, trained[0].at(key)});
  }
  return erased;
}

}  // namespace mtbert
