#pragma once
// The `mtbert train` command lines that do what a sweep does with each of its
// runs (train/run_status.h decides what: run_action), the same whether the
// sweep runs them here (sweep_jobs.h) or a cluster does (slurm_script.h).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_expansion.h"
#include "train/run_status.h"

namespace mtbert {

// How a sweep's listing names an action.
const char* sweep_action_name(RunAction action);

// `train EXPERIMENT --overlay O... OVERRIDES... --out FOLDER`: a new run.
std::vector<std::string> start_arguments(const SweepRun& run, const std::vector<std::filesystem::path>& overlays);
// `train --resume FOLDER`. A run to restart gets start_arguments: `train
// --out` clears what its failed attempt left.
std::vector<std::string> resume_arguments(const SweepRun& run);

// When `folder` holds a config.resolved.yaml that differs from `resolved`
// (what the sweep would write now), the first differing line of each; a run
// trained under an older version of its experiment file is then reported, not
// retrained.
std::optional<std::string> resolved_config_change(const std::filesystem::path& folder, const std::string& resolved);

}  // namespace mtbert
