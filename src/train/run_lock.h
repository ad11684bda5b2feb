#pragma once
// Only one process trains in a run folder at a time. The trainer holds an
// exclusive flock(2) on the folder itself for as long as it runs; the kernel
// releases it when the process ends, however it ends, so a crashed run never
// leaves a stale lock behind (unlike a lock file). mtbert sweep probes the
// same lock to tell a run that is training now from one that was interrupted.
#include <filesystem>

namespace mtbert {

class RunLock {
 public:
  // Locks the existing folder `dir`; a UserError when another process holds it.
  explicit RunLock(const std::filesystem::path& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// Whether another process holds the lock of `dir` now (false when `dir` does
// not exist).
bool run_is_locked(const std::filesystem::path& dir);

}  // namespace mtbert
