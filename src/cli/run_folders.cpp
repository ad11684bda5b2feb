#include "cli/run_folders.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/user_error.h"
#include "train/run_lock.h"

namespace mtbert::cli {

namespace fs = std::filesystem;

ConfigArguments split_config_arguments(const std::vector<std::string>& positional) {
  ConfigArguments out;
  for (const auto& arg : positional) {
    if (arg.find('=') != std::string::npos) out.overrides.push_back(arg);
    else if (out.path.empty()) out.path = arg;
    else throw UserError(fmt::format("unexpected argument \"{}\" (overrides are key.path=value)", arg));
  }
  return out;
}

RunState resumable_run(const std::string& folder) {
  RunState state = inspect_run(folder);
  if (run_is_done(state.status)) return state;
  if (state.status == RunStatus::running)
    throw UserError(fmt::format("{} is being trained by another process", folder));
  if (state.status != RunStatus::interrupted)
    throw UserError(fs::exists(RunDirectory(folder).resolved_config())
                        ? fmt::format("{} has no checkpoint to resume from; start it again as a new run", folder)
                        : fmt::format("{} is not a run folder (no config.resolved.yaml)", folder));
  return state;
}

// A run folder that must not be overwritten: say what to do instead. A folder
// holding only train.log is fresh: a sweep or a cluster job opened the log
// before starting the run.
void check_fresh_run_folder(const RunDirectory& run, const std::string& command) {
  const fs::path root = run.root();
  switch (inspect_run(root).status) {
    case RunStatus::missing: break;
    case RunStatus::running: throw UserError(fmt::format("{} is being trained by another process", root.string()));
    case RunStatus::finished:
    case RunStatus::early_stopped:
      throw UserError(fmt::format("{} already holds a finished run; choose another --out or remove it", root.string()));
    case RunStatus::interrupted:
      throw UserError(fmt::format("{} holds an unfinished run; continue it with mtbert {} --resume {}",
                                  root.string(), command, root.string()));
    case RunStatus::failed: break;
  }
  if (!fs::exists(root)) return;
  const bool only_log = fs::is_directory(root) && std::all_of(fs::directory_iterator(root), fs::directory_iterator(),
                                                              [&](const fs::directory_entry& entry) {
                                                                return entry.path() == run.train_log();
                                                              });
  if (!only_log)
    throw UserError(fmt::format("{} exists and is not a run folder; choose another --out", root.string()));
}

void in_fresh_run_folder(const RunDirectory& run, const std::string& command, const std::function<void()>& start) {
  check_fresh_run_folder(run, command);
  const bool existed = fs::exists(run.root());
  run.create();
  const RunLock lock(run.root());
  try {
    start();
  } catch (...) {
    // Nothing half-written stays behind a run that never reached a checkpoint.
    if (!run.has_checkpoint("last")) run.discard_unstarted(/*remove_root=*/!existed);
    throw;
  }
}

}  // namespace mtbert::cli
