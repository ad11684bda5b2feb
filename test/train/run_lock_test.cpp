// The run lock: held while training, probed by sweeps, gone with its holder.
#include "train/run_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("a run folder is locked while a RunLock holds it", "[run_lock]") {
  mtbert::test::TempDir dir;
  CHECK_FALSE(mtbert::run_is_locked(dir.path()));
  {
    const mtbert::RunLock lock(dir.path());
    CHECK(mtbert::run_is_locked(dir.path()));
    CHECK_THROWS_WITH(mtbert::RunLock(dir.path()), ContainsSubstring("is being trained by another process"));
  }
  CHECK_FALSE(mtbert::run_is_locked(dir.path()));
  CHECK_FALSE(mtbert::run_is_locked(dir / "absent"));
  CHECK_THROWS_WITH(mtbert::RunLock(dir / "absent"), ContainsSubstring("cannot open run folder"));
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
