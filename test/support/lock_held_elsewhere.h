#pragma once
// A run folder's lock held by another process (a forked child) for as long as
// this object lives: what a sweep or trainer in another terminal looks like.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "support/catch.h"
#include "train/run_lock.h"

namespace mtbert::test {

class LockHeldElsewhere {
 public:
  // Returns once the child holds the lock of `dir`.
  explicit LockHeldElsewhere(const std::filesystem::path& dir) {
    REQUIRE(::pipe(ready_) == 0);
    REQUIRE(::pipe(done_) == 0);
    child_ = ::fork();
    if (child_ == 0) {
      const RunLock held(dir);
      char c = 'x';
      (void)!::write(ready_[1], &c, 1);
      (void)!::read(done_[0], &c, 1);
      ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready_[0], &c, 1) == 1);
  }
  // The child lets go and ends; the lock is free again on return.
  ~LockHeldElsewhere() {
    char c = 'x';
    (void)!::write(done_[1], &c, 1);
    ::waitpid(child_, nullptr, 0);
    for (int fd : {ready_[0], ready_[1], done_[0], done_[1]}) ::close(fd);
  }
  LockHeldElsewhere(const LockHeldElsewhere&) = delete;
  LockHeldElsewhere& operator=(const LockHeldElsewhere&) = delete;

 private:
  int ready_[2] = {-1, -1}, done_[2] = {-1, -1};
  pid_t child_ = -1;
};

}  // namespace mtbert::test
