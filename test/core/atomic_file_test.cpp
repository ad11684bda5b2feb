// FileWriter and write_file_atomically: a failed write (here /dev/full, which
// fails every write with ENOSPC) is one UserError naming the file and the OS's
// reason, nothing half-written is left, and the destination keeps its old
// contents.
#include "core/atomic_file.h"

#include <torch/torch.h>

#include <fstream>
#include <sstream>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int files_in(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("FileWriter on a full disk reports ENOSPC at finish, never from write", "[atomic_file]") {
  if (!fs::exists("/dev/full")) MTBERT_SKIP("no /dev/full here");
  mtbert::FileWriter out("/dev/full", "runs/x/optimizer.pt");
  out.write("some bytes");
  const char bytes[4] = {1, 2, 3, 4};
  CHECK(out.write(bytes, 4) == 4);  // always the whole size: LibTorch's writer must not see a short write
  CHECK_THROWS_WITH(out.finish(), ContainsSubstring("cannot write runs/x/optimizer.pt: No space left on device"));
}

TEST_CASE("LibTorch's archive writer saves through a FileWriter on a full disk without terminating",
          "[atomic_file]") {
  if (!fs::exists("/dev/full")) MTBERT_SKIP("no /dev/full here");
  // What train/checkpoint.cpp does with the optimizer's state: a short write
  // would make the archive writer's destructor throw, and std::terminate.
  torch::serialize::OutputArchive archive;
  archive.write("moments", torch::ones({1000}));
  mtbert::FileWriter out("/dev/full", "optimizer.pt");
  archive.save_to([&](const void* data, size_t size) { return out.write(data, size); });
  CHECK_THROWS_WITH(out.finish(), ContainsSubstring("optimizer.pt: No space left on device"));
}

TEST_CASE("write_file_atomically leaves the destination as it was when writing fails", "[atomic_file]") {
  mtbert::test::TempDir dir;
  const auto file = dir.write("summary.json", "old");
  CHECK_THROWS_WITH(mtbert::write_file_atomically(file,
                                                  [](mtbert::FileWriter& out) {
                                                    out.write("new, half");
                                                    throw mtbert::UserError("interrupted");
                                                  }),
                    ContainsSubstring("interrupted"));
  CHECK(read(file) == "old");
  CHECK(files_in(dir.path()) == 1);  // no temporary file left

  mtbert::write_text_atomically(file, "new");
  CHECK(read(file) == "new");
  CHECK(files_in(dir.path()) == 1);
}

TEST_CASE("write_file_atomically names the destination's problem", "[atomic_file]") {
  mtbert::test::TempDir dir;
  fs::create_directory(dir / "out.pt");
  CHECK_THROWS_WITH(mtbert::write_text_atomically(dir / "out.pt", "x"),
                    ContainsSubstring("out.pt: it is a directory; give a file name"));
  CHECK_THROWS_WITH(mtbert::write_text_atomically(dir / "no" / "such" / "dir.json", "x"),
                    ContainsSubstring("directory " + (dir / "no" / "such").string() + " does not exist"));
}

TEST_CASE("append_line appends one line", "[atomic_file]") {
  mtbert::test::TempDir dir;
  mtbert::append_line(dir / "m.jsonl", "{\"a\": 1}");
  mtbert::append_line(dir / "m.jsonl", "{\"a\": 2}");
  CHECK(read(dir / "m.jsonl") == "{\"a\": 1}\n{\"a\": 2}\n");
}
