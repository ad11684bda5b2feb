// Running a sweep's commands as child processes, with a stand-in for mtbert:
// a shell script that records how it was called.
#include "sweep/sweep_jobs.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fake mtbert: logs its arguments, notes the largest number of copies of
// itself running at once (a marker file each while it runs), and exits with
// the code given as its last argument.
fs::path fake_trainer(const mtbert::test::TempDir& dir) {
  const auto script = dir.write("fake-mtbert",
                                "#!/bin/bash\n"
                                "echo \"args: $*\"\n"
                                "echo \"stderr line\" >&2\n"
                                "touch \"$MARKERS/$$\"\n"
                                "n=$(ls \"$MARKERS\" | wc -l)\n"
                                "if [[ $n -gt $(cat \"$MAX\" 2>/dev/null || echo 0) ]]; then echo $n > \"$MAX\"; fi\n"
                                "sleep 0.2\n"
                                "rm \"$MARKERS/$$\"\n"
                                "exit \"${@: -1}\"\n");
  fs::permissions(script, fs::perms::owner_all);
  fs::create_directories(dir / "markers");
  ::setenv("MARKERS", (dir / "markers").c_str(), 1);
  ::setenv("MAX", (dir / "max").c_str(), 1);
  return script;
}

}  // namespace

TEST_CASE("jobs run at most N at a time, each logging to its own file", "[sweep_jobs]") {
  mtbert::test::TempDir dir;
  const auto exe = fake_trainer(dir);
  std::vector<mtbert::SweepJob> jobs;
  for (int i = 0; i < 5; ++i)
    jobs.push_back({"run" + std::to_string(i), dir / ("run" + std::to_string(i)) / "train.log",
                    {"train", "x.yaml", std::to_string(i == 3 ? 2 : 0)}});
  std::vector<std::string> started, ended;
  std::map<std::string, int> codes;
  mtbert::SweepJobHooks hooks;
  hooks.started = [&](const mtbert::SweepJob& job) { started.push_back(job.name); };
  hooks.ended = [&](const mtbert::SweepJob& job, const mtbert::SweepJobResult& result) {
    ended.push_back(job.name);
    codes[job.name] = result.exit_code;
  };
  CHECK(mtbert::run_sweep_jobs(exe, jobs, 2, hooks) == 0);
  CHECK(started == std::vector<std::string>{"run0", "run1", "run2", "run3", "run4"});
  CHECK(ended.size() == 5);
  CHECK(codes["run0"] == 0);
  CHECK(codes["run3"] == 2);
  CHECK(std::stoi(read(dir / "max")) <= 2);
  const std::string log = read(dir / "run1" / "train.log");
  INFO(log);
  CHECK(log.find("=== ") == 0);
  CHECK(log.find("mtbert sweep: " + exe.string() + " train x.yaml 0\n") != std::string::npos);
  CHECK(log.find("args: train x.yaml 0\n") != std::string::npos);
  CHECK(log.find("stderr line\n") != std::string::npos);
}

TEST_CASE("a log is appended to, and a job that cannot start ends with 127", "[sweep_jobs]") {
  mtbert::test::TempDir dir;
  const auto exe = fake_trainer(dir);
  std::vector<mtbert::SweepJob> jobs{{"a", dir / "a" / "train.log", {"0"}}};
  mtbert::run_sweep_jobs(exe, jobs, 1, {});
  mtbert::run_sweep_jobs(exe, jobs, 1, {});
  const std::string log = read(dir / "a" / "train.log");
  CHECK(log.find("args: 0") != log.rfind("args: 0"));  // twice

  int code = -1;
  std::string error;
  mtbert::SweepJobHooks hooks;
  hooks.ended = [&](const mtbert::SweepJob&, const mtbert::SweepJobResult& r) {
    code = r.exit_code;
    error = r.error;
  };
  mtbert::run_sweep_jobs(dir / "no-such-binary", jobs, 1, hooks);
  CHECK(code == 127);
  CHECK(error.find("cannot start") != std::string::npos);
}

TEST_CASE("a signal stops the sweep from starting jobs and reaches the running ones", "[sweep_jobs]") {
  mtbert::test::TempDir dir;
  const auto exe = dir.write("slow", "#!/bin/bash\ntrap 'kill $pid; exit 143' TERM\nsleep 30 &\npid=$!\nwait\n");
  fs::permissions(exe, fs::perms::owner_all);
  std::vector<mtbert::SweepJob> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back({"j" + std::to_string(i), dir / ("j" + std::to_string(i)) / "log", {}});
  int started = 0;
  std::vector<int> codes;
  mtbert::SweepJobHooks hooks;
  hooks.started = [&](const mtbert::SweepJob&) {
    if (++started == 2) std::raise(SIGTERM);  // as `kill` on the sweep would
  };
  hooks.ended = [&](const mtbert::SweepJob&, const mtbert::SweepJobResult& r) { codes.push_back(r.exit_code); };
  CHECK(mtbert::run_sweep_jobs(exe, jobs, 2, hooks) == SIGTERM);
  CHECK(started == 2);
  CHECK(codes == std::vector<int>{143, 143});
}

TEST_CASE("prepare settles each job at its turn: passed over, or started with what it inherits", "[sweep_jobs]") {
  mtbert::test::TempDir dir;
  // Prints its environment's variable and whether descriptor 9 is open in it.
  const auto exe = dir.write("probe", "#!/bin/bash\necho \"var=$SWEEP_TEST_VAR\"\n"
                                      "if [[ -e /proc/self/fd/9 ]]; then echo fd9=open; else echo fd9=closed; fi\n");
  fs::permissions(exe, fs::perms::owner_all);
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(::dup3(fd, 9, O_CLOEXEC) == 9);
  std::vector<mtbert::SweepJob> jobs{{"skipped", dir / "skipped.log", {}},
                                     {"handed", dir / "handed.log", {}},
                                     {"plain", dir / "plain.log", {}}};
  std::vector<std::string> prepared, started;
  mtbert::SweepJobHooks hooks;
  hooks.prepare = [&](mtbert::SweepJob& job) {
    prepared.push_back(job.name);
    if (job.name == "skipped") return false;
    if (job.name == "handed") {
      job.inherited_fd = 9;
      job.environment = {"SWEEP_TEST_VAR=given"};
    }
    return true;
  };
  hooks.started = [&](const mtbert::SweepJob& job) { started.push_back(job.name); };
  CHECK(mtbert::run_sweep_jobs(exe, jobs, 1, hooks) == 0);
  CHECK(prepared == std::vector<std::string>{"skipped", "handed", "plain"});
  CHECK(started == std::vector<std::string>{"handed", "plain"});
  CHECK_FALSE(fs::exists(dir / "skipped.log"));
  CHECK(read(dir / "handed.log").find("var=given\nfd9=open\n") != std::string::npos);
  CHECK(read(dir / "plain.log").find("var=\nfd9=closed\n") != std::string::npos);
  CHECK((::fcntl(9, F_GETFD) & FD_CLOEXEC) != 0);  // inheritable for that child only
  ::close(9);
  ::close(fd);
}
