#include "sweep/sweep_jobs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/child_group.h"
#include "core/runtime.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

std::string local_time() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

// Starts one job in `group`; false (and the reason in `error`) when it cannot.
bool spawn(ChildGroup& group, const fs::path& executable, const SweepJob& job, std::string& error) {
  std::error_code ec;
  if (job.log.has_parent_path()) fs::create_directories(job.log.parent_path(), ec);
  const int log = ::open(job.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    error = fmt::format("cannot open {}: {}", job.log.string(), std::strerror(errno));
    return false;
  }
  const int nothing = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> quoted{shell_quoted(executable.string())};
  for (const auto& arg : job.args) quoted.push_back(shell_quoted(arg));
  const std::string header = fmt::format("=== {} mtbert sweep: {}\n", local_time(), fmt::join(quoted, " "));
  bool started = false;
  if (nothing < 0) {
    error = fmt::format("cannot open /dev/null: {}", std::strerror(errno));
  } else if (::write(log, header.data(), header.size()) < 0) {
    error = fmt::format("cannot write {}: {}", job.log.string(), std::strerror(errno));
  } else {
    ChildSpec spec;
    spec.args = job.args;
    spec.environment = job.environment;
    spec.descriptors = {{nothing, 0}, {log, 1}, {log, 2}};
    spec.inherited_fd = job.inherited_fd;
    started = group.start(executable, spec, error);
  }
  if (nothing >= 0) ::close(nothing);
  ::close(log);
  return started;
}

}  // namespace

int run_sweep_jobs(const fs::path& executable, std::vector<SweepJob>& jobs, int parallel,
                   const SweepJobHooks& hooks) {
  if (parallel < 1) throw UserError(fmt::format("--jobs must be at least 1, got {}", parallel));
  ChildGroup group;
  std::vector<size_t> job_of;  // by child number
  size_t running = 0, next = 0;
  int forwarded = 0;
  while ((next < jobs.size() && group.signals_received() == 0) || running > 0) {
    // Pass each signal the sweep got on to the running jobs, once.
    if (const int signals = group.signals_received(); signals > forwarded) {
      group.signal_running(group.last_signal());
      forwarded = signals;
    }
    while (group.signals_received() == 0 && next < jobs.size() && static_cast<int>(running) < parallel) {
      SweepJob& job = jobs[next++];
      if (hooks.prepare && !hooks.prepare(job)) continue;
      std::string error;
      if (spawn(group, executable, job, error)) {
        job_of.push_back(next - 1);
        ++running;
        if (hooks.started) hooks.started(job);
      } else {
        if (hooks.started) hooks.started(job);
        if (hooks.ended) hooks.ended(job, SweepJobResult{127, 0.0, error});
      }
    }
    for (const ChildEnd& end : group.wait(std::chrono::milliseconds(50))) {
      --running;
      if (hooks.ended) hooks.ended(jobs[job_of[end.index]], SweepJobResult{end.exit_code, end.seconds, ""});
    }
  }
  return group.last_signal();
}

}  // namespace mtbert
