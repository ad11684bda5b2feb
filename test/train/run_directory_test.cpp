// RunDirectory: checkpoints are replaced whole or not at all.
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
