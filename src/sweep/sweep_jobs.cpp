#include "sweep/sweep_jobs.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/child_process.h"
#include "core/duration.h"
#include "core/scoped_signal_handler.h"
#include "core/runtime.h"
#include "core/user_error.h"

extern char** environ;

namespace mtbert {

namespace {

namespace fs = std::filesystem;

std::atomic<int> g_signals{0};
std::atomic<int> g_last_signal{0};

extern "C" void on_sweep_signal(int signal) {
  g_last_signal.store(signal);
  g_signals.fetch_add(1);
}

// Forgets the signals a previous run saw, before the handler is installed.
void reset_signal_state() {
  g_signals.store(0);
  g_last_signal.store(0);
}

std::string local_time() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return text;
}

// This process's environment with the job's variables added (replacing
// any of the same name).
std::vector<std::string> job_environment(const SweepJob& job) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(job.environment.begin(), job.environment.end(),
                     [&](const std::string& added) { return added.rfind(name, 0) == 0; }))
      env.push_back(entry);
  }
  env.insert(env.end(), job.environment.begin(), job.environment.end());
  return env;
}

struct Running {
  size_t index;
  pid_t pid;
  double start;
};

// Starts one job; -1 (and the reason in `error`) when it cannot.
pid_t spawn(const fs::path& executable, const SweepJob& job, std::string& error) {
  std::error_code ec;
  if (job.log.has_parent_path()) fs::create_directories(job.log.parent_path(), ec);
  const int log = ::open(job.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    error = fmt::format("cannot open {}: {}", job.log.string(), std::strerror(errno));
    return -1;
  }
  std::vector<std::string> quoted{shell_quoted(executable.string())};
  for (const auto& arg : job.args) quoted.push_back(shell_quoted(arg));
  const std::string header = fmt::format("=== {} mtbert sweep: {}\n", local_time(), fmt::join(quoted, " "));
  if (::write(log, header.data(), header.size()) < 0) {
    error = fmt::format("cannot write {}: {}", job.log.string(), std::strerror(errno));
    ::close(log);
    return -1;
  }

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files, log, 1);
  posix_spawn_file_actions_adddup2(&files, log, 2);

  std::vector<std::string> env = job_environment(job);
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  // Inheritable for this child only: the jobs start one at a time, from this
  // thread, and the flag is set back at once.
  const int inherited_flags = job.inherited_fd >= 0 ? ::fcntl(job.inherited_fd, F_GETFD) : -1;
  if (inherited_flags >= 0) ::fcntl(job.inherited_fd, F_SETFD, inherited_flags & ~FD_CLOEXEC);
  pid_t pid = -1;
  const int status = spawn_child(pid, executable, job.args, envp.data(), &files);
  if (inherited_flags >= 0) ::fcntl(job.inherited_fd, F_SETFD, inherited_flags);
  posix_spawn_file_actions_destroy(&files);
  ::close(log);
  if (status != 0) {
    error = fmt::format("cannot start {}: {}", executable.string(), std::strerror(status));
    return -1;
  }
  return pid;
}

}  // namespace

int run_sweep_jobs(const fs::path& executable, std::vector<SweepJob>& jobs, int parallel,
                   const SweepJobHooks& hooks) {
  if (parallel < 1) throw UserError(fmt::format("--jobs must be at least 1, got {}", parallel));
  reset_signal_state();
  const ScopedSignalHandler catcher(on_sweep_signal);
  std::vector<Running> running;
  size_t next = 0;
  int forwarded = 0;
  while ((next < jobs.size() && g_signals.load() == 0) || !running.empty()) {
    // Pass each signal the sweep got on to the running jobs, once.
    if (const int signals = g_signals.load(); signals > forwarded) {
      for (const auto& r : running) ::kill(r.pid, g_last_signal.load());
      forwarded = signals;
    }
    while (g_signals.load() == 0 && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      SweepJob& job = jobs[next];
      if (hooks.prepare && !hooks.prepare(job)) {
        ++next;
        continue;
      }
      std::string error;
      const pid_t pid = spawn(executable, job, error);
      if (pid < 0) {
        if (hooks.started) hooks.started(job);
        if (hooks.ended) hooks.ended(job, SweepJobResult{127, 0.0, error});
      } else {
        running.push_back(Running{next, pid, steady_seconds()});
        if (hooks.started) hooks.started(job);
      }
      ++next;
    }
    bool reaped = false;
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
      if (done != it->pid) {
        ++it;
        continue;
      }
      SweepJobResult result;
      result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      result.seconds = steady_seconds() - it->start;
      const size_t index = it->index;
      it = running.erase(it);
      reaped = true;
      if (hooks.ended) hooks.ended(jobs[index], result);
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return g_last_signal.load();
}

}  // namespace mtbert
