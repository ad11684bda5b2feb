#include "cli/run_folder_checks.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/user_error.h"
#include "train/run_status.h"

namespace mtbert::cli {

namespace fs = std::filesystem;

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

}  // namespace mtbert::cli
