#pragma once
// Only one process trains in a run folder at a time. The trainer holds an
// exclusive open-file-description lock (fcntl F_OFD_SETLK) on the folder's
// run.lock for as long as it runs; the kernel releases it when the process
// ends, however it ends, so a crashed run never leaves a stale lock behind
// (the file stays; the lock does not). mtbert sweep, status and report probe
// the same lock to tell a run that is training now from one that was
// interrupted, without taking it (F_OFD_GETLK): a probe can never make a
// starting run find its folder taken.
//
// Why not flock(2) on the folder, as before: Linux has no way to test a
// flock without taking it (F_GETLK does not see flock locks), and a probe
// that takes the lock for a moment can refuse a run that starts at that
// moment. OFD locks belong, like flock's, to the open file (shared by a
// child that inherits the descriptor, released when its last copy closes),
// and F_OFD_GETLK reads them; they need a file opened for writing, hence
// run.lock rather than the folder.
//
// A sweep decides a run's fate under its lock (two sweeps on one root must
// not both start it) and hands that very lock to the `mtbert train` it starts:
// the child inherits the locked descriptor, named in its environment
// (handover_variable), and a RunLock of the same folder in it, or in the rank
// 0 it launches, takes the lock over instead of locking again. The lock is
// never free between the sweep's decision and the run's end.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

namespace mtbert {

class RunLock {
 public:
  // Locks the existing folder `dir` (creating its run.lock), or takes over
  // the lock handed to this process for it; a UserError when another process
  // holds it.
  explicit RunLock(const std::filesystem::path& dir);
  // The lock of `dir`, or none while another process holds it; a UserError
  // when the folder cannot be opened.
  static std::optional<RunLock> try_lock(const std::filesystem::path& dir);
  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&&) = delete;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

  // The locked descriptor (run.lock's): a child process started with it inherited and
  // with handover_variable() in its environment holds this lock too.
  int fd() const { return fd_; }
  std::string handover_variable() const;

 private:
  RunLock(int fd, bool owns_fd, std::pair<dev_t, ino_t> file);
  static RunLock taken_or_refused(const std::filesystem::path& dir);

  int fd_ = -1;
  bool owns_fd_ = true;  // false: the inherited descriptor, left open for the rest of the process
  std::pair<dev_t, ino_t> file_{0, 0};  // run.lock's identity
};

// Whether another process holds the lock of `dir` now (false when `dir` or
// its run.lock does not exist, or when this process holds it: a RunLock of
// its own, or the lock a sweep handed to it). Reads the lock, never takes it.
bool run_is_locked(const std::filesystem::path& dir);

}  // namespace mtbert
