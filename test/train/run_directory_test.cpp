// RunDirectory: checkpoints are replaced whole or not at all; a run reads its
// relative paths from the folder it started in.
#include "train/run_directory.h"

#include <fstream>

#include "core/atomic_file.h"
#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("a checkpoint whose writing fails leaves the last good one as it was", "[run_directory]") {
  mtbert::test::TempDir dir;
  mtbert::RunDirectory run(dir / "run");
  run.create();
  run.replace_checkpoint("last", [](const std::filesystem::path& tmp) { mtbert::write_text_atomically(tmp / "a", "good"); });
  CHECK_THROWS_WITH(run.replace_checkpoint("last",
                                           [](const std::filesystem::path& tmp) {
                                             mtbert::write_text_atomically(tmp / "a", "half");
                                             throw mtbert::UserError("cannot write a: No space left on device");
                                           }),
                    ContainsSubstring("No space left on device"));
  CHECK_FALSE(std::filesystem::exists(run.checkpoint("last.tmp")));
  std::ifstream in(run.checkpoint("last") / "a");
  std::string text;
  in >> text;
  CHECK(text == "good");
}

TEST_CASE("a run's relative paths are read from the folder it started in", "[run_directory]") {
  namespace fs = std::filesystem;
  mtbert::test::TempDir dir;
  fs::create_directories(dir / "start" / "data");
  mtbert::write_text_atomically(dir / "start" / "data" / "train.csv", "id\n");
  mtbert::RunDirectory run(dir / "run");
  run.create();
  CHECK(run.started_in().empty());  // an old run without the record
  run.write_summary({{"status", "running"}, {"working_directory", (dir / "start").string()}});
  CHECK(run.started_in() == dir / "start");

  const fs::path start = run.started_in();
  CHECK(mtbert::path_from_run_start("data/train.csv", start) == (start / "data" / "train.csv").string());
  // Absolute paths, and files not there (a run folder moved to another
  // machine), stay as configured; so does everything without a record.
  const std::string absolute = (dir / "elsewhere.csv").string();
  CHECK(mtbert::path_from_run_start(absolute, start) == absolute);
  CHECK(mtbert::path_from_run_start("data/missing.csv", start) == "data/missing.csv");
  CHECK(mtbert::path_from_run_start("data/train.csv", {}) == "data/train.csv");
  CHECK(mtbert::path_from_run_start("", start).empty());
}
