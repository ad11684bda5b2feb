#pragma once
// Where a run folder stands, read from the folder alone: what mtbert sweep
// decides from (skip, resume, start) and what mtbert report marks.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtbert {

enum class RunStatus {
  missing,        // nothing trained there yet: no folder, or no config.resolved.yaml
  running,        // a process is training in it now (it holds the run lock)
  interrupted,    // stopped with a checkpoint to resume from (checkpoints/last)
  failed,         // started, but stopped before its first checkpoint: only a restart helps
  unresumable,    // checkpoints/best, and checkpoints/last removed after it was written: kept, never cleared
  finished,       // summary.json: finished
  early_stopped,  // summary.json: early_stopped
};

const char* run_status_name(RunStatus status);

// finished or early_stopped: the run has its final metrics.
inline bool run_is_done(RunStatus status) {
  return status == RunStatus::finished || status == RunStatus::early_stopped;
}

struct RunState {
  RunStatus status = RunStatus::missing;
  nlohmann::json summary = nlohmann::json::object();  // summary.json, or {}
  // The run's tags: summary.json's, or config.resolved.yaml's for a run that
  // has not finished.
  std::vector<std::string> tags;
};

RunState inspect_run(const std::filesystem::path& folder);

// What a resume command needs besides the folder: " --nproc N" for a run of
// N > 1 data-parallel ranks (it resumes with as many), else nothing.
std::string resume_ranks_hint(int world_size);

}  // namespace mtbert
