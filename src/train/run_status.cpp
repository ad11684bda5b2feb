#include "train/run_status.h"

#include "config/config_tree.h"
#include "train/run_directory.h"
#include "train/run_lock.h"

namespace mtbert {

namespace fs = std::filesystem;

const char* run_status_name(RunStatus status) {
  switch (status) {
    case RunStatus::missing: return "missing";
    case RunStatus::running: return "running";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::failed: return "failed";
    case RunStatus::unresumable: return "unresumable";
    case RunStatus::finished: return "finished";
    case RunStatus::early_stopped: return "early_stopped";
  }
  return "?";
}

namespace {

std::vector<std::string> resolved_tags(const RunDirectory& run) {
  std::vector<std::string> tags;
  if (!fs::exists(run.resolved_config())) return tags;
  const ConfigNode root = read_config_file(run.resolved_config());
  if (const ConfigNode* node = root.is_map() ? root.find("tags") : nullptr)
    for (const auto& item : node->items) tags.push_back(item.text);
  return tags;
}

}  // namespace

RunState inspect_run(const fs::path& folder) {
  RunState state;
  const RunDirectory run(folder);
  if (!fs::is_directory(folder)) return state;
  state.summary = run.read_summary();
  if (state.summary.contains("tags")) state.tags = state.summary["tags"].get<std::vector<std::string>>();
  else state.tags = resolved_tags(run);

  const std::string recorded = state.summary.value("status", "");
  if (run_is_locked(folder)) state.status = RunStatus::running;
  else if (recorded == "finished") state.status = RunStatus::finished;
  else if (recorded == "early_stopped") state.status = RunStatus::early_stopped;
  else if (run.has_checkpoint("last")) state.status = RunStatus::interrupted;
  // Its checkpoints/last was removed after it had been written (the run was
  // interrupted with it, or evaluated twice: each evaluation is followed by
  // one): the best checkpoint is a result worth keeping, not a run to clear.
  // A run killed while writing its first is an ordinary failed one.
  else if (run.has_checkpoint("best") && (recorded == "interrupted" || run.read_metrics().size() >= 2))
    state.status = RunStatus::unresumable;
  else if (fs::exists(run.resolved_config()) || fs::exists(run.summary())) state.status = RunStatus::failed;
  return state;
}

std::string resume_ranks_hint(int world_size) {
  return world_size > 1 ? " --nproc " + std::to_string(world_size) : std::string();
}

}  // namespace mtbert
