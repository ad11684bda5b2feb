#include "train/run_status.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "config/config_tree.h"
#include "core/user_error.h"
#include "train/run_directory.h"

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

RunAction run_action(RunStatus status) {
  switch (status) {
    case RunStatus::finished:
    case RunStatus::early_stopped: return RunAction::skip;
    case RunStatus::running: return RunAction::wait;
    case RunStatus::interrupted: return RunAction::resume;
    case RunStatus::failed: return RunAction::restart;
    case RunStatus::unresumable: return RunAction::keep;
    case RunStatus::missing: break;
  }
  return RunAction::start;
}

const char* run_action_name(RunAction action) {
  switch (action) {
    case RunAction::skip: return "skip";
    case RunAction::wait: return "wait";
    case RunAction::keep: return "keep";
    case RunAction::resume: return "resume";
    case RunAction::restart: return "restart";
    case RunAction::start: return "start";
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

namespace {

UserError not_a_run_folder(const std::string& folder) {
  return UserError(fmt::format("{} is not a run folder (no config.resolved.yaml)", folder));
}

}  // namespace

RunState resumable_run(const std::string& folder, const std::string& command) {
  const RunDirectory run(folder);
  std::error_code ec;
  if (fs::is_regular_file(run.resolved_config(), ec)) {
    const bool pretraining = run.is_pretraining();
    if (pretraining != (command == "pretrain"))
      throw UserError(fmt::format("{} is a {} run: resume it with mtbert {} --resume {}", folder,
                                  pretraining ? "pretraining" : "fine-tuning", pretraining ? "pretrain" : "train",
                                  folder));
  }
  RunState state = inspect_run(folder);
  switch (run_action(state.status)) {
    case RunAction::skip:
    case RunAction::resume: return state;
    case RunAction::wait: throw UserError(fmt::format("{} is being trained by another process", folder));
    case RunAction::keep:
      throw UserError(fmt::format("{} has checkpoints/best but no checkpoints/last, so it cannot be resumed (the "
                                  "best checkpoint still serves eval and predict); remove the folder to train it "
                                  "again",
                                  folder));
    case RunAction::restart:
      if (fs::exists(run.resolved_config(), ec))
        throw UserError(fmt::format("{} stopped before its first checkpoint, so there is nothing to resume; start "
                                    "it again with the same --out",
                                    folder));
      break;
    case RunAction::start: break;
  }
  throw not_a_run_folder(folder);
}

std::pair<RunLock, RunState> lock_to_resume(const std::string& folder, const std::string& command) {
  std::error_code ec;
  if (!fs::is_regular_file(RunDirectory(folder).resolved_config(), ec)) throw not_a_run_folder(folder);
  RunLock lock(folder);  // first: the run's state is read under it
  RunState state = resumable_run(folder, command);
  return {std::move(lock), std::move(state)};
}

namespace {

// What a run that never started leaves: train.log (a sweep or a cluster job
// opens it before starting the run), run.lock (its lock's file), and the
// empty checkpoints/ and predictions/ of RunDirectory::create(), made before
// config.resolved.yaml (a run killed between the two must start again, not
// be refused).
bool from_unstarted_run(const RunDirectory& run, const fs::directory_entry& entry) {
  if (entry.path() == run.train_log() || entry.path() == run.lock_file()) return true;
  if (entry.path() != run.checkpoints_dir() && entry.path() != run.predictions_dir()) return false;
  std::error_code ec;
  return entry.is_directory(ec) && fs::is_empty(entry.path(), ec);
}

}  // namespace

void check_fresh_run_folder(const fs::path& root, const std::string& command) {
  const RunDirectory run(root);
  switch (run_action(inspect_run(root).status)) {
    case RunAction::start: break;
    case RunAction::wait: throw UserError(fmt::format("{} is being trained by another process", root.string()));
    case RunAction::skip:
      throw UserError(fmt::format("{} already holds a finished run; choose another --out or remove it", root.string()));
    case RunAction::resume:
      throw UserError(fmt::format("{} holds an unfinished run; continue it with mtbert {} --resume {}",
                                  root.string(), command, root.string()));
    case RunAction::keep:
      throw UserError(fmt::format("{} holds a run with checkpoints/best but no checkpoints/last; choose another --out, "
                                  "or remove it to train it again",
                                  root.string()));
    case RunAction::restart:
      // A run of ours that stopped before its first checkpoint (killed, or a
      // disk that filled): nothing in it can be resumed, so it starts again.
      spdlog::info("{} holds a run that stopped before its first checkpoint: starting it again there",
                   root.string());
      run.discard_unstarted(/*remove_root=*/false);
      return;
  }
  if (!fs::exists(root)) return;
  const bool unstarted = fs::is_directory(root) && std::all_of(fs::directory_iterator(root), fs::directory_iterator(),
                                                               [&](const fs::directory_entry& entry) {
                                                                 return from_unstarted_run(run, entry);
                                                               });
  if (!unstarted)
    throw UserError(fmt::format("{} exists and is not a run folder; choose another --out", root.string()));
}

std::string resume_ranks_hint(int world_size) {
  return world_size > 1 ? " --nproc " + std::to_string(world_size) : std::string();
}

}  // namespace mtbert
