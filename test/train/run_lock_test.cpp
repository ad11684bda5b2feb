// The run lock: held while training, probed by sweeps, gone with its holder.
#include "train/run_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/user_error.h"
#include "support/lock_held_elsewhere.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

// What another process sees: run_is_locked(dir) in a forked child (its exit
// code), with `handover` (RunLock::handover_variable) in its environment
// when given.
bool locked_in_child(const std::filesystem::path& dir, const std::string& handover = "") {
  const pid_t child = ::fork();
  if (child == 0) {
    if (!handover.empty()) ::putenv(const_cast<char*>(handover.c_str()));
    ::_exit(mtbert::run_is_locked(dir) ? 1 : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WEXITSTATUS(status) == 1;
}

// Whether a forked child can take the lock of `dir` (RunLock), with
// `handover` in its environment when given.
bool child_can_lock(const std::filesystem::path& dir, const std::string& handover = "") {
  const pid_t child = ::fork();
  if (child == 0) {
    if (!handover.empty()) ::putenv(const_cast<char*>(handover.c_str()));
    try {
      const mtbert::RunLock lock(dir);
      ::_exit(0);
    } catch (const mtbert::UserError&) {
      ::_exit(1);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WEXITSTATUS(status) == 0;
}

}  // namespace

TEST_CASE("a run folder is locked while a RunLock holds it", "[run_lock]") {
  mtbert::test::TempDir dir;
  CHECK_FALSE(mtbert::run_is_locked(dir.path()));
  {
    const mtbert::RunLock lock(dir.path());
    CHECK(locked_in_child(dir.path()));
    CHECK_FALSE(child_can_lock(dir.path()));
    // This process's own lock is not "another process's".
    CHECK_FALSE(mtbert::run_is_locked(dir.path()));
    CHECK_THROWS_WITH(mtbert::RunLock(dir.path()), ContainsSubstring("is being trained by another process"));
  }
  CHECK_FALSE(locked_in_child(dir.path()));
  CHECK(child_can_lock(dir.path()));
  CHECK_FALSE(mtbert::run_is_locked(dir / "absent"));
  CHECK_THROWS_WITH(mtbert::RunLock(dir / "absent"), ContainsSubstring("cannot open run folder"));
  CHECK_THROWS_WITH(mtbert::RunLock::try_lock(dir / "absent"), ContainsSubstring("cannot open run folder"));
}

TEST_CASE("try_lock: the lock, or none while another process holds it", "[run_lock]") {
  mtbert::test::TempDir dir;
  auto lock = mtbert::RunLock::try_lock(dir.path());
  REQUIRE(lock.has_value());
  CHECK(locked_in_child(dir.path()));
  lock.reset();
  {
    const mtbert::test::LockHeldElsewhere elsewhere(dir.path());
    CHECK_FALSE(mtbert::RunLock::try_lock(dir.path()).has_value());
  }
  CHECK(mtbert::RunLock::try_lock(dir.path()).has_value());
}

TEST_CASE("a lock handed down to a child is the child's: it takes it over, no one else can", "[run_lock]") {
  mtbert::test::TempDir dir;
  const std::filesystem::path other = dir / "other";
  std::filesystem::create_directories(other);
  const mtbert::RunLock lock(dir.path());
  const std::string handover = lock.handover_variable();
  CHECK(handover.rfind("MTBERT_RUN_LOCK_FD=", 0) == 0);
  // A forked child has the descriptor (an exec'd one inherits it when the
  // sweep starts it so); with the variable, the lock is its own.
  CHECK_FALSE(locked_in_child(dir.path(), handover));
  CHECK(child_can_lock(dir.path(), handover));
  // Without the variable it is another process's; the variable names no
  // other folder's lock.
  CHECK(locked_in_child(dir.path()));
  CHECK_FALSE(child_can_lock(dir.path()));
  const mtbert::RunLock other_lock(other);
  CHECK(locked_in_child(other, handover));
  CHECK_FALSE(child_can_lock(other, handover));
}

TEST_CASE("the lock of a process that ended is released", "[run_lock]") {
  mtbert::test::TempDir dir;
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Takes the lock, says so, and dies without any cleanup.
    const mtbert::RunLock lock(dir.path());
    char c = 'x';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK(mtbert::run_is_locked(dir.path()));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(mtbert::run_is_locked(dir.path()));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("a probe never takes the lock, nor writes into the folder", "[run_lock]") {
  mtbert::test::TempDir dir;
  // Nothing has locked the folder yet: the probe leaves it as it is.
  CHECK_FALSE(mtbert::run_is_locked(dir.path()));
  CHECK(std::filesystem::is_empty(dir.path()));
  { const mtbert::RunLock first(dir.path()); }
  // Another process probes without pause while this one takes and releases
  // the lock: with a probe that took the lock for a moment, some of these
  // would find it taken.
  const pid_t prober = ::fork();
  if (prober == 0) {
    for (;;) (void)mtbert::run_is_locked(dir.path());
  }
  int refused = 0;
  for (int i = 0; i < 3000; ++i) refused += mtbert::RunLock::try_lock(dir.path()).has_value() ? 0 : 1;
  ::kill(prober, SIGKILL);
  ::waitpid(prober, nullptr, 0);
  CHECK(refused == 0);
}
