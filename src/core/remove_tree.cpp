#include "core/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace mtbert {

namespace {

// Called children first (FTW_DEPTH); a nonzero result stops the walk and is
// what nftw returns.
int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return std::remove(path) == 0 ? 0 : errno;
}

}  // namespace

void remove_tree(const std::filesystem::path& path, std::error_code& ec) {
  ec.clear();
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) ec.assign(errno, std::generic_category());
    return;
  }
  // Up to 16 open directories at a time; deeper trees still work (nftw closes
  // and reopens them).
  const int result = ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (result != 0) ec.assign(result > 0 ? result : errno, std::generic_category());
}

}  // namespace mtbert
