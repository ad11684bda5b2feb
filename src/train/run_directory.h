#pragma once
// The folder a training run writes, and the only code that knows its layout:
//
//   config.resolved.yaml       every key of the experiment, defaults included
//   metrics.jsonl              one JSON object per evaluation
//   summary.json               best dev metrics, test metrics, timing, sizes, provenance
//   tokenizer/                 the run's tokenizer files (copied, or trained for it)
//   model_config.json          the encoder's config, overrides applied
//   checkpoints/last/          model.safetensors, optimizer.pt, state.json: for --resume
//   checkpoints/best/          model.safetensors, state.json: the best dev score so far
//   predictions/<task>-<split>-output.csv   CS224N leaderboard layout
//   train.log                  the run's output, when a sweep (or a cluster job) runs it
//   run.lock                   empty; while a process trains in the folder it holds a lock on it
//                              (train/run_lock.h)
//
// Every file is written atomically, and a checkpoint folder is replaced as a
// whole, so an interruption at any moment leaves the previous one usable.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mtbert {

class RunDirectory {
 public:
  explicit RunDirectory(std::filesystem::path root);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path resolved_config() const { return root_ / "config.resolved.yaml"; }
  std::filesystem::path metrics() const { return root_ / "metrics.jsonl"; }
  std::filesystem::path summary() const { return root_ / "summary.json"; }
  std::filesystem::path tokenizer_dir() const { return root_ / "tokenizer"; }
  // The encoder's HF-keyed config (after the experiment's overrides), so that
  // the run can be rebuilt without its pretrained folder.
  std::filesystem::path model_config() const { return root_ / "model_config.json"; }
  std::filesystem::path checkpoints_dir() const { return root_ / "checkpoints"; }
  std::filesystem::path checkpoint(const std::string& name) const { return checkpoints_dir() / name; }
  std::filesystem::path predictions_dir() const { return root_ / "predictions"; }
  // Written by whoever starts the run in the background (mtbert sweep, a Slurm
  // job), so it may exist before anything else does.
  std::filesystem::path train_log() const { return root_ / "train.log"; }
  // The file the run's lock is taken on (train/run_lock.h): made by the first
  // lock, kept as long as the folder is (a new file would be a new lock).
  std::filesystem::path lock_file() const { return root_ / "run.lock"; }

  // Creates the folder and its subfolders.
  void create() const;

  // Undoes a run that failed before its first checkpoint (a bad data row, a
  // missing file): removes everything but train.log and run.lock, and the
  // folder itself (run.lock with it) when `remove_root` and nothing else is
  // left, so that rerunning the same command after the fix starts afresh.
  void discard_unstarted(bool remove_root) const;

  // Whether checkpoint `name` exists (also when only its previous copy
  // survived an interruption during replacement).
  bool has_checkpoint(const std::string& name) const;
  // The folder to read checkpoint `name` from (see replace_checkpoint).
  std::filesystem::path checkpoint_to_read(const std::string& name) const;

  // Fills a fresh folder with `write`, then swaps it in for checkpoint
  // `name`: <name>.tmp is written, <name> becomes <name>.old, <name>.tmp
  // becomes <name>, <name>.old is removed. Readers fall back to <name>.old.
  void replace_checkpoint(const std::string& name,
                          const std::function<void(const std::filesystem::path&)>& write) const;

  // Appends one JSON line to metrics.jsonl (flushed; a torn last line from a
  // crash is dropped by read_metrics).
  void append_metrics(const nlohmann::json& row) const;
  std::vector<nlohmann::json> read_metrics() const;
  // Keeps only the rows with step <= `step`: what resuming from that step
  // must start from.
  void truncate_metrics(int64_t step) const;

  void write_summary(const nlohmann::json& summary) const;
  // The summary, or an empty object when there is none.
  nlohmann::json read_summary() const;
  // Whether the run is mtbert pretrain's (its config has a corpus), not a
  // fine-tuning run.
  bool is_pretraining() const;
  // The folder the run was started in (summary.json's working_directory);
  // empty for a run that did not record it.
  std::filesystem::path started_in() const;

 private:
  std::filesystem::path root_;
};

// A path of a run's config as the run meant it: relative paths are relative
// to the folder the run started in (`started_in`), so that a run resumed or
// evaluated from another folder reads the same files. Kept as configured when
// it is absolute, when `started_in` is empty or the current folder, or when
// the file is not there (a run folder moved to another machine).
std::string path_from_run_start(const std::string& configured, const std::filesystem::path& started_in);

}  // namespace mtbert
