// check_input_file / read_input_file: each kind of thing that is not a
// readable file gets its own cause in one line naming the path, and a FIFO
// never blocks the reader.
#include "core/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using mtbert::read_input_file;
using mtbert::UserError;

TEST_CASE("read_input_file names what stands at the path", "[input_file]") {
  mtbert::test::TempDir dir;
  const auto file = dir.write("a.txt", "hello");
  CHECK(read_input_file(file, 100, "text file") == "hello");
  CHECK(mtbert::check_input_file(file) == 5);

  CHECK_THROWS_WITH(read_input_file(dir / "missing.txt", 100, "text file"),
                    ContainsSubstring("missing.txt: no such file"));
  CHECK_THROWS_WITH(read_input_file(dir.path(), 100, "text file"), ContainsSubstring(": is a directory, not a file"));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(read_input_file(dir / "fifo", 100, "text file"), ContainsSubstring("fifo: is a FIFO, not a regular file"));
  CHECK_THROWS_WITH(read_input_file("/dev/null", 100, "text file"), ContainsSubstring("/dev/null: is a device"));
  CHECK_THROWS_WITH(read_input_file(file, 4, "text file"),
                    ContainsSubstring("a.txt: 5 bytes; a text file is at most 4 bytes (is it the right file?)"));
  CHECK_THROWS_AS(mtbert::open_input_file(dir.path()), UserError);
}

TEST_CASE("a file this process may not read is named with the OS's reason", "[input_file]") {
  if (::geteuid() == 0) MTBERT_SKIP("running as root, which may read any file");
  mtbert::test::TempDir dir;
  const auto file = dir.write("secret.txt", "x");
  std::filesystem::permissions(file, std::filesystem::perms::none);
  CHECK_THROWS_WITH(read_input_file(file, 100, "text file"), ContainsSubstring("secret.txt: cannot read: Permission denied"));
}

TEST_CASE("describe_bytes gives sizes in decimal units", "[input_file]") {
  CHECK(mtbert::describe_bytes(999) == "999 bytes");
  CHECK(mtbert::describe_bytes(1500) == "1.5 KB");
  CHECK(mtbert::describe_bytes(100'000'000'000) == "100.0 GB");
}
