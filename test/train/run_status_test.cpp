// Run status from the folder alone, on folders made by hand in each state, and
// what may be done with each.
#include "train/run_status.h"

#include <fstream>
#include <set>
#include <string>

#include "core/user_error.h"
#include "support/lock_held_elsewhere.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/run_lock.h"

namespace fs = std::filesystem;
using mtbert::RunAction;
using mtbert::RunStatus;
using Catch::Matchers::ContainsSubstring;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

RunStatus status_of(const fs::path& folder) { return mtbert::inspect_run(folder).status; }

}  // namespace

TEST_CASE("missing, failed, interrupted, unresumable, finished and early-stopped folders", "[run_status]") {
  mtbert::test::TempDir dir;
  CHECK(status_of(dir / "absent") == RunStatus::missing);
  fs::create_directories(dir / "empty");
  CHECK(status_of(dir / "empty") == RunStatus::missing);
  write(dir / "log-only" / "train.log", "=== started\n");
  write(dir / "log-only" / "run.lock", "");
  CHECK(status_of(dir / "log-only") == RunStatus::missing);

  // Stopped before its first checkpoint: a config and a "running" summary.
  write(dir / "failed" / "config.resolved.yaml", "name: \"failed\"\n");
  write(dir / "failed" / "summary.json", R"({"name": "failed", "status": "running"})");
  CHECK(status_of(dir / "failed") == RunStatus::failed);

  // Killed after a checkpoint (the summary still says running), or stopped by
  // a signal (it says interrupted), or killed while replacing the checkpoint.
  write(dir / "killed" / "summary.json", R"({"status": "running"})");
  fs::create_directories(dir / "killed" / "checkpoints" / "last");
  CHECK(status_of(dir / "killed") == RunStatus::interrupted);
  write(dir / "stopped" / "summary.json", R"({"status": "interrupted"})");
  fs::create_directories(dir / "stopped" / "checkpoints" / "last");
  CHECK(status_of(dir / "stopped") == RunStatus::interrupted);
  write(dir / "swapping" / "config.resolved.yaml", "");
  fs::create_directories(dir / "swapping" / "checkpoints" / "last.old");
  CHECK(status_of(dir / "swapping") == RunStatus::interrupted);
  // checkpoints/last removed by hand once written (the run was interrupted
  // with it, or evaluated twice): the best checkpoint is kept, not cleared.
  write(dir / "no-last" / "summary.json", R"({"status": "interrupted"})");
  fs::create_directories(dir / "no-last" / "checkpoints" / "best");
  CHECK(status_of(dir / "no-last") == RunStatus::unresumable);
  write(dir / "no-last-2" / "summary.json", R"({"status": "running"})");
  write(dir / "no-last-2" / "metrics.jsonl", "{\"step\": 10}\n{\"step\": 20}\n");
  fs::create_directories(dir / "no-last-2" / "checkpoints" / "best");
  CHECK(status_of(dir / "no-last-2") == RunStatus::unresumable);
  // Killed after its first evaluation, while writing its first checkpoints/last.
  write(dir / "first-save" / "summary.json", R"({"status": "running"})");
  write(dir / "first-save" / "metrics.jsonl", "{\"step\": 10}\n");
  fs::create_directories(dir / "first-save" / "checkpoints" / "best");
  fs::create_directories(dir / "first-save" / "checkpoints" / "last.tmp");
  CHECK(status_of(dir / "first-save") == RunStatus::failed);

  write(dir / "done" / "summary.json", R"({"status": "finished", "best": {"overall": 0.5}})");
  fs::create_directories(dir / "done" / "checkpoints" / "last");
  const auto done = mtbert::inspect_run(dir / "done");
  CHECK(done.status == RunStatus::finished);
  CHECK(done.summary["best"]["overall"] == 0.5);
  write(dir / "patience" / "summary.json", R"({"status": "early_stopped"})");
  CHECK(status_of(dir / "patience") == RunStatus::early_stopped);
  CHECK(mtbert::run_is_done(RunStatus::early_stopped));
  CHECK_FALSE(mtbert::run_is_done(RunStatus::interrupted));
}

TEST_CASE("a folder whose lock another process holds is running", "[run_status]") {
  mtbert::test::TempDir dir;
  write(dir / "run" / "summary.json", R"({"status": "running"})");
  fs::create_directories(dir / "run" / "checkpoints" / "last");
  {
    const mtbert::test::LockHeldElsewhere elsewhere(dir / "run");
    CHECK(status_of(dir / "run") == RunStatus::running);
  }
  CHECK(status_of(dir / "run") == RunStatus::interrupted);
  // Under this process's own lock (a sweep deciding, a trainer checking the
  // folder it locked), the folder is what it holds.
  const mtbert::RunLock lock(dir / "run");
  CHECK(status_of(dir / "run") == RunStatus::interrupted);
}

TEST_CASE("tags come from summary.json, or from the config of a run without them", "[run_status]") {
  mtbert::test::TempDir dir;
  write(dir / "a" / "summary.json", R"({"status": "finished", "tags": ["smoke", "pal"]})");
  CHECK(mtbert::inspect_run(dir / "a").tags == std::vector<std::string>{"smoke", "pal"});
  write(dir / "b" / "config.resolved.yaml", "name: \"b\"\ntags: [\"smoke\"]\nseed: 1\n");
  write(dir / "b" / "summary.json", R"({"status": "running", "name": "b"})");
  CHECK(mtbert::inspect_run(dir / "b").tags == std::vector<std::string>{"smoke"});
  CHECK(mtbert::inspect_run(dir / "absent").tags.empty());
}

TEST_CASE("each status has its action", "[run_status]") {
  CHECK(mtbert::run_action(RunStatus::missing) == RunAction::start);
  CHECK(mtbert::run_action(RunStatus::failed) == RunAction::restart);
  CHECK(mtbert::run_action(RunStatus::interrupted) == RunAction::resume);
  CHECK(mtbert::run_action(RunStatus::running) == RunAction::wait);
  CHECK(mtbert::run_action(RunStatus::unresumable) == RunAction::keep);
  CHECK(mtbert::run_action(RunStatus::finished) == RunAction::skip);
  CHECK(mtbert::run_action(RunStatus::early_stopped) == RunAction::skip);
  CHECK(std::string(mtbert::run_action_name(RunAction::restart)) == "restart");
}

TEST_CASE("a new run goes only where nothing is, or nothing started", "[run_status]") {
  mtbert::test::TempDir dir;
  CHECK_NOTHROW(mtbert::check_fresh_run_folder(dir / "absent", "train"));
  // What an unstarted run leaves: its log, its lock's file, empty subfolders.
  write(dir / "unstarted" / "train.log", "=== started\n");
  write(dir / "unstarted" / "run.lock", "");
  fs::create_directories(dir / "unstarted" / "checkpoints");
  CHECK_NOTHROW(mtbert::check_fresh_run_folder(dir / "unstarted", "train"));
  // A failed run is cleared but for its log and lock.
  write(dir / "failed" / "config.resolved.yaml", "name: \"failed\"\n");
  write(dir / "failed" / "train.log", "first attempt\n");
  write(dir / "failed" / "run.lock", "");
  fs::create_directories(dir / "failed" / "tokenizer");
  mtbert::check_fresh_run_folder(dir / "failed", "pretrain");
  std::set<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir / "failed")) left.insert(entry.path().filename().string());
  CHECK(left == std::set<std::string>{"run.lock", "train.log"});

  write(dir / "stopped" / "summary.json", R"({"status": "interrupted"})");
  fs::create_directories(dir / "stopped" / "checkpoints" / "last");
  CHECK_THROWS_WITH(mtbert::check_fresh_run_folder(dir / "stopped", "pretrain"),
                    ContainsSubstring("continue it with mtbert pretrain --resume"));
  write(dir / "other" / "notes.txt", "mine\n");
  CHECK_THROWS_WITH(mtbert::check_fresh_run_folder(dir / "other", "train"),
                    ContainsSubstring("exists and is not a run folder"));
}

TEST_CASE("only an interrupted run resumes; a finished one is returned as it is", "[run_status]") {
  mtbert::test::TempDir dir;
  write(dir / "stopped" / "summary.json", R"({"status": "interrupted"})");
  fs::create_directories(dir / "stopped" / "checkpoints" / "last");
  CHECK(mtbert::resumable_run((dir / "stopped").string(), "train").status == RunStatus::interrupted);
  write(dir / "done" / "summary.json", R"({"status": "finished"})");
  CHECK(mtbert::resumable_run((dir / "done").string(), "train").status == RunStatus::finished);
  write(dir / "failed" / "config.resolved.yaml", "name: \"failed\"\n");
  CHECK_THROWS_WITH(mtbert::resumable_run((dir / "failed").string(), "train"),
                    ContainsSubstring("stopped before its first checkpoint"));
  fs::create_directories(dir / "empty");
  CHECK_THROWS_WITH(mtbert::resumable_run((dir / "empty").string(), "train"),
                    ContainsSubstring("is not a run folder"));
}
