#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

// The folder opened for locking, or -1; O_CLOEXEC so that processes started
// meanwhile do not inherit (and keep) the lock.
int open_folder(const std::filesystem::path& dir) {
  return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

}  // namespace

RunLock::RunLock(const std::filesystem::path& dir) : fd_(open_folder(dir)) {
  if (fd_ < 0) throw UserError(fmt::format("cannot open run folder {}: {}", dir.string(), std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    if (error == EWOULDBLOCK)
      throw UserError(fmt::format("{} is being trained by another process; wait for it or stop it", dir.string()));
    throw UserError(fmt::format("cannot lock run folder {}: {}", dir.string(), std::strerror(error)));
  }
}

RunLock::~RunLock() { ::close(fd_); }

bool run_is_locked(const std::filesystem::path& dir) {
  const int fd = open_folder(dir);
  if (fd < 0) return false;
  const bool locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock, if it got one
  return locked;
}

}  // namespace mtbert
