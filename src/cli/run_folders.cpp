#include "cli/run_folders.h"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "config/resolved_diff.h"
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

void check_resume_config(const RunDirectory& run, bool force,
                         const std::function<std::string(const fs::path&)>& canonical) {
  const fs::path saved = run.checkpoint_to_read("last") / "config.resolved.yaml";
  std::error_code ec;
  if (!fs::is_regular_file(saved, ec)) return;
  const std::set<std::string> free_keys = {"name", "tags", "output_dir", "threads", "distributed.timeout_seconds"};
  std::vector<ResolvedChange> changes;
  for (auto& change : resolved_changes(canonical(saved), canonical(run.resolved_config())))
    if (!free_keys.count(change.key)) changes.push_back(std::move(change));
  if (changes.empty()) return;
  // The model is rebuilt from the run's own files (model_config.json, its
  // tokenizer, the checkpoint's tensors and optimizer groups): a change there
  // would be recorded but not trained, so --force does not cover it.
  for (const auto& c : changes)
    if (c.key.rfind("model.", 0) == 0)
      throw UserError(fmt::format("{}: {}: {} now, {} when the checkpoint was written; a resumed run keeps its model "
                                  "(its encoder, tokenizer, PALs and trained parameters), even with --force: restore "
                                  "the file",
                                  run.resolved_config().string(), c.key, c.after, c.before));
  if (force) {
    for (const auto& c : changes)
      spdlog::warn("--force: resuming with {} = {} (the checkpoint was trained with {}): the run is no longer the "
                   "one an uninterrupted run would have been",
                   c.key, c.after, c.before);
    return;
  }
  std::vector<std::string> others;
  for (size_t i = 1; i < changes.size(); ++i) others.push_back(changes[i].key);
  throw UserError(fmt::format("{}: {}: {} now, {} when the checkpoint was written{}; resuming would not continue the "
                              "same run: restore the file, or resume anyway with --force",
                              run.resolved_config().string(), changes[0].key, changes[0].after, changes[0].before,
                              others.empty() ? "" : fmt::format(" (also changed: {})", fmt::join(others, ", "))));
}

RunDirectory new_run_folder(const std::string& out, const std::string& output_dir) {
  if (!out.empty()) return RunDirectory(out);
  const auto finished = [](const fs::path& folder) { return run_is_done(inspect_run(folder).status); };
  fs::path folder = output_dir;
  for (int n = 2; finished(folder); ++n) folder = fs::path(fmt::format("{}-{}", output_dir, n));
  if (folder != fs::path(output_dir))
    spdlog::info("{} holds a finished run: this one goes to {} (--out names a folder)", output_dir, folder.string());
  return RunDirectory(folder);
}

void in_fresh_run_folder(const RunDirectory& run, const std::string& command, const std::function<void()>& start) {
  check_fresh_run_folder(run.root(), command);  // before any folder is made
  const bool existed = fs::exists(run.root());
  run.create();
  // Again under the lock, which is what counts: another process may have
  // trained a run here since. (A failed run it finds is cleared, subfolders
  // and all: they are made again.)
  const RunLock lock(run.root());
  check_fresh_run_folder(run.root(), command);
  run.create();
  try {
    start();
  } catch (...) {
    // Nothing half-written stays behind a run that never reached a checkpoint.
    if (!run.has_checkpoint("last")) run.discard_unstarted(/*remove_root=*/!existed);
    throw;
  }
}

}  // namespace mtbert::cli
