#include "train/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

using FolderId = std::pair<dev_t, ino_t>;

// The variable that names the descriptor a sweep handed down (run_lock.h).
constexpr const char* kHandoverVariable = "MTBERT_RUN_LOCK_FD";

// The folder opened for locking, or -1; O_CLOEXEC so that processes started
// meanwhile do not inherit (and keep) the lock.
int open_folder(const fs::path& dir) { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

FolderId folder_id(int fd) {
  struct stat st {};
  ::fstat(fd, &st);
  return {st.st_dev, st.st_ino};
}

// The folders whose lock a RunLock of this process holds: what tells this
// process's own lock from another process's when it probes one. Each with
// the holder's pid, since a forked child gets a copy of this set but not
// the locks.
using Held = std::pair<pid_t, FolderId>;
std::mutex g_mutex;
std::multiset<Held> g_held;

// The descriptor handed down for `folder`, when this process has one: it is
// open on that folder and holds its lock (flock succeeds again on the open
// file that holds it). -1 otherwise.
int handed_down(const FolderId& folder) {
  const char* text = std::getenv(kHandoverVariable);
  if (!text) return -1;
  const std::string_view digits(text);
  int fd = -1;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
      ec != std::errc() || end != digits.data() + digits.size() || fd < 0)
    return -1;
  if (::fcntl(fd, F_GETFD) < 0 || folder_id(fd) != folder) return -1;
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? fd : -1;
}

bool held_here(const FolderId& folder) {
  {
    const std::lock_guard<std::mutex> guard(g_mutex);
    if (g_held.count(Held{::getpid(), folder})) return true;
  }
  return handed_down(folder) >= 0;
}

struct Acquired {
  int fd;
  bool owned;
  FolderId folder;
};

// The lock of `dir`: taken now, or the one handed down; none while another
// process holds it.
std::optional<Acquired> acquire(const fs::path& dir) {
  const int fd = open_folder(dir);
  if (fd < 0) throw UserError(fmt::format("cannot open run folder {}: {}", dir.string(), std::strerror(errno)));
  const FolderId folder = folder_id(fd);
  if (const int inherited = handed_down(folder); inherited >= 0) {
    ::close(fd);
    return Acquired{inherited, false, folder};
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Acquired{fd, true, folder};
  const int error = errno;
  ::close(fd);
  if (error == EWOULDBLOCK) return std::nullopt;
  throw UserError(fmt::format("cannot lock run folder {}: {}", dir.string(), std::strerror(error)));
}

}  // namespace

RunLock::RunLock(int fd, bool owns_fd, std::pair<dev_t, ino_t> folder) : fd_(fd), owns_fd_(owns_fd), folder_(folder) {
  const std::lock_guard<std::mutex> guard(g_mutex);
  g_held.insert(Held{::getpid(), folder_});
}

RunLock RunLock::taken_or_refused(const fs::path& dir) {
  auto lock = try_lock(dir);
  if (!lock)
    throw UserError(fmt::format("{} is being trained by another process; wait for it or stop it", dir.string()));
  return std::move(*lock);
}

RunLock::RunLock(const fs::path& dir) : RunLock(taken_or_refused(dir)) {}

std::optional<RunLock> RunLock::try_lock(const fs::path& dir) {
  const auto acquired = acquire(dir);
  if (!acquired) return std::nullopt;
  return RunLock(acquired->fd, acquired->owned, acquired->folder);
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(other.fd_), owns_fd_(other.owns_fd_), folder_(other.folder_) {
  other.fd_ = -1;
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  {
    const std::lock_guard<std::mutex> guard(g_mutex);
    const auto it = g_held.find(Held{::getpid(), folder_});
    if (it != g_held.end()) g_held.erase(it);
  }
  if (owns_fd_) ::close(fd_);
}

std::string RunLock::handover_variable() const { return fmt::format("{}={}", kHandoverVariable, fd_); }

bool run_is_locked(const fs::path& dir) {
  const int fd = open_folder(dir);
  if (fd < 0) return false;
  bool locked = false;
  if (!held_here(folder_id(fd))) locked = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock, if it got one
  return locked;
}

}  // namespace mtbert
