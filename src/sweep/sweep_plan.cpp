#include "sweep/sweep_plan.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/resolved_diff.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "train/run_directory.h"

namespace mtbert {

namespace fs = std::filesystem;

const char* sweep_action_name(RunAction action) {
  switch (action) {
    case RunAction::wait: return "leave (running)";
    case RunAction::keep: return "leave (no last)";
    default: return run_action_name(action);
  }
}

std::vector<std::string> start_arguments(const SweepRun& run, const std::vector<fs::path>& overlays) {
  std::vector<std::string> args{"train", run.experiment.string()};
  for (const auto& overlay : overlays) {
    args.push_back("--overlay");
    args.push_back(overlay.string());
  }
  for (const auto& o : run.overrides) args.push_back(o.text);
  args.push_back("--out");
  args.push_back(run.folder.string());
  return args;
}

std::vector<std::string> resume_arguments(const SweepRun& run) { return {"train", "--resume", run.folder.string()}; }

std::optional<std::string> resolved_config_change(const fs::path& folder, const std::string& resolved) {
  const RunDirectory run(folder);
  std::error_code ec;
  if (!fs::is_regular_file(run.resolved_config(), ec)) return std::nullopt;
  auto changes =
      resolved_changes(read_input_file(run.resolved_config(), limits::kConfigFileBytes, "config file"), resolved);
  // A run records the --threads the sweep gave it, which follows the cores
  // and --parallel of each sweep call: how fast a run went, not what it is.
  changes.erase(std::remove_if(changes.begin(), changes.end(),
                               [](const ResolvedChange& change) { return change.key == "threads"; }),
                changes.end());
  if (changes.empty()) return std::nullopt;
  return fmt::format("{}: the run has {}, the sweep now gives {}", changes[0].key, changes[0].before, changes[0].after);
}

}  // namespace mtbert
