#include "cli/run_folders.h"

#include <algorithm>
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
  if (run_is_done(state.status)) return state;
  if (state.status == RunStatus::running)
    throw UserError(fmt::format("{} is being trained by another process", folder));
  if (state.status == RunStatus::unresumable)
    throw UserError(fmt::format("{} has checkpoints/best but no checkpoints/last, so it cannot be resumed (the best "
                                "checkpoint still serves eval and predict); remove the folder to train it again",
                                folder));
  if (state.status != RunStatus::interrupted)
    throw UserError(fs::exists(RunDirectory(folder).resolved_config())
                        ? fmt::format("{} stopped before its first checkpoint, so there is nothing to resume; start "
                                      "it again with the same --out",
                                      folder)
                        : fmt::format("{} is not a run folder (no config.resolved.yaml)", folder));
  return state;
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

namespace {

// What a run that never started leaves: train.log (a sweep or a cluster job
// opens it before starting the run), and the empty checkpoints/ and
// predictions/ of RunDirectory::create(), made before config.resolved.yaml
// (a run killed between the two must start again, not be refused).
bool from_unstarted_run(const RunDirectory& run, const fs::directory_entry& entry) {
  if (entry.path() == run.train_log()) return true;
  if (entry.path() != run.checkpoints_dir() && entry.path() != run.predictions_dir()) return false;
  std::error_code ec;
  return entry.is_directory(ec) && fs::is_empty(entry.path(), ec);
}

}  // namespace

RunDirectory new_run_folder(const std::string& out, const std::string& output_dir) {
  if (!out.empty()) return RunDirectory(out);
  const auto finished = [](const fs::path& folder) {
    const RunStatus status = inspect_run(folder).status;
    return status == RunStatus::finished || status == RunStatus::early_stopped;
  };
  fs::path folder = output_dir;
  for (int n = 2; finished(folder); ++n) folder = fs::path(fmt::format("{}-{}", output_dir, n));
  if (folder != fs::path(output_dir))
    spdlog::info("{} holds a finished run: this one goes to {} (--out names a folder)", output_dir, folder.string());
  return RunDirectory(folder);
}

// A run folder that must not be overwritten: say what to do instead. A folder
// holding only what an unstarted run leaves is fresh.
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
    case RunStatus::unresumable:
      throw UserError(fmt::format("{} holds a run with checkpoints/best but no checkpoints/last; choose another --out, "
                                  "or remove it to train it again",
                                  root.string()));
    case RunStatus::failed:
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

void in_fresh_run_folder(const RunDirectory& run, const std::string& command, const std::function<void()>& start) {
  check_fresh_run_folder(run, command);  // before any folder is made
  const bool existed = fs::exists(run.root());
  run.create();
  // Again under the lock, which is what counts: another process may have
  // trained a run here since. (A failed run it finds is cleared, subfolders
  // and all: they are made again.)
  const RunLock lock(run.root());
  check_fresh_run_folder(run, command);
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
