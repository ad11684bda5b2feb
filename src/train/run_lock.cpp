#include "train/run_lock.h"

#include <fcntl.h>
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
#include "train/run_directory.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

using FileId = std::pair<dev_t, ino_t>;

// The variable that names the descriptor a sweep handed down (run_lock.h).
constexpr const char* kHandoverVariable = "MTBERT_RUN_LOCK_FD";

fs::path lock_file(const fs::path& dir) { return RunDirectory(dir).lock_file(); }

// run.lock opened for locking (created when absent; the folder must exist),
// or -1 with errno; O_CLOEXEC so that processes started meanwhile do not
// inherit (and keep) the lock.
int open_for_locking(const fs::path& dir) {
  return ::open(lock_file(dir).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
}

FileId file_id(int fd) {
  struct stat st {};
  ::fstat(fd, &st);
  return {st.st_dev, st.st_ino};
}

// The whole file, exclusively: what every holder asks for and every probe
// asks about.
struct flock whole_file(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;
  lock.l_pid = 0;  // required by F_OFD_* calls
  return lock;
}

// Takes the lock on `fd`'s open file without waiting: true, or false with
// errno (EAGAIN or EACCES while another open file holds it). Asked again on
// the open file that holds it, it succeeds.
bool take(int fd) {
  struct flock lock = whole_file(F_WRLCK);
  return ::fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

// The folders whose lock a RunLock of this process holds: what tells this
// process's own lock from another process's when it probes one (a probe's
// own open file conflicts with it like anyone's). Each with the holder's
// pid, since a forked child gets a copy of this set but not the locks.
using Held = std::pair<pid_t, FileId>;
std::mutex g_mutex;
std::multiset<Held> g_held;

// The descriptor handed down for the run.lock `file`, when this process has
// one: it is open on that file and holds its lock. -1 otherwise.
int handed_down(const FileId& file) {
  const char* text = std::getenv(kHandoverVariable);
  if (!text) return -1;
  const std::string_view digits(text);
  int fd = -1;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
      ec != std::errc() || end != digits.data() + digits.size() || fd < 0)
    return -1;
  if (::fcntl(fd, F_GETFD) < 0 || file_id(fd) != file) return -1;
  return take(fd) ? fd : -1;
}

bool held_here(const FileId& file) {
  {
    const std::lock_guard<std::mutex> guard(g_mutex);
    if (g_held.count(Held{::getpid(), file})) return true;
  }
  return handed_down(file) >= 0;
}

struct Acquired {
  int fd;
  bool owned;
  FileId file;
};

// The lock of `dir`: taken now, or the one handed down; none while another
// process holds it.
std::optional<Acquired> acquire(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(fmt::format("cannot open run folder {}: {}", dir.string(),
                                std::strerror(fs::exists(dir, ec) ? ENOTDIR : ENOENT)));
  const int fd = open_for_locking(dir);
  if (fd < 0) throw UserError(fmt::format("cannot open run folder {}: {}", dir.string(), std::strerror(errno)));
  const FileId file = file_id(fd);
  if (const int inherited = handed_down(file); inherited >= 0) {
    ::close(fd);
    return Acquired{inherited, false, file};
  }
  if (take(fd)) return Acquired{fd, true, file};
  const int error = errno;
  ::close(fd);
  if (error == EAGAIN || error == EACCES) return std::nullopt;
  throw UserError(fmt::format("cannot lock run folder {}: {}", dir.string(), std::strerror(error)));
}

}  // namespace

RunLock::RunLock(int fd, bool owns_fd, std::pair<dev_t, ino_t> file) : fd_(fd), owns_fd_(owns_fd), file_(file) {
  const std::lock_guard<std::mutex> guard(g_mutex);
  g_held.insert(Held{::getpid(), file_});
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
  return RunLock(acquired->fd, acquired->owned, acquired->file);
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(other.fd_), owns_fd_(other.owns_fd_), file_(other.file_) {
  other.fd_ = -1;
}

RunLock::~RunLock() {
  if (fd_ < 0) return;
  {
    const std::lock_guard<std::mutex> guard(g_mutex);
    const auto it = g_held.find(Held{::getpid(), file_});
    if (it != g_held.end()) g_held.erase(it);
  }
  if (owns_fd_) ::close(fd_);
}

std::string RunLock::handover_variable() const { return fmt::format("{}={}", kHandoverVariable, fd_); }

bool run_is_locked(const fs::path& dir) {
  // Read-only: a probe writes nothing, and works in a folder it may not write.
  const int fd = ::open(lock_file(dir).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // no run.lock: no process has locked the folder since it was made
  bool locked = false;
  if (!held_here(file_id(fd))) {
    struct flock probe = whole_file(F_WRLCK);
    locked = ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  }
  ::close(fd);
  return locked;
}

}  // namespace mtbert
