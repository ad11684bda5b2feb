// remove_tree: a nested tree with files, an empty folder and a symbolic link
// goes, the link's target stays; a single file goes; a missing path is no
// error; a failure (a folder whose parent is read-only, unless root) is an
// errno in the error code with the tree left as it was.
#include "core/remove_tree.h"

#include <unistd.h>

#include <torch/torch.h>

#include <fstream>

#include "support/temp_dir.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace mtbert;

TEST_CASE("remove_tree removes a tree, not what its links point to", "[core]") {
  test::TempDir dir;
  const fs::path kept = dir.path() / "kept.txt", tree = dir.path() / "tree";
  std::ofstream(kept) << "outside";
  fs::create_directories(tree / "a" / "b" / "empty");
  std::ofstream(tree / "a" / "b" / "file.txt") << "x";
  std::ofstream(tree / "top.txt") << "y";
  fs::create_symlink(kept, tree / "a" / "link");
  fs::create_directory_symlink(dir.path(), tree / "dir-link");  // a loop, if followed

  std::error_code ec;
  remove_tree(tree, ec);
  CHECK(!ec);
  CHECK(!fs::exists(fs::symlink_status(tree)));
  CHECK(fs::exists(kept));

  remove_tree(kept, ec);  // a single file
  CHECK(!ec);
  CHECK(!fs::exists(kept));

  remove_tree(dir.path() / "never-there", ec);
  CHECK(!ec);
}

TEST_CASE("remove_tree reports a failure in its error code", "[core]") {
  if (::geteuid() == 0) MTBERT_SKIP("running as root: permissions do not stop removal");
  test::TempDir dir;
  const fs::path locked = dir.path() / "locked";
  fs::create_directories(locked / "inner");
  std::ofstream(locked / "inner" / "file.txt") << "x";
  fs::permissions(locked / "inner", fs::perms::owner_read | fs::perms::owner_exec);
  std::error_code ec;
  remove_tree(locked, ec);
  CHECK(ec.value() == EACCES);
  CHECK(fs::exists(locked / "inner" / "file.txt"));
  fs::permissions(locked / "inner", fs::perms::owner_all);
}
