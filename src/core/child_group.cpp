#include "core/child_group.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/child_process.h"

extern char** environ;

namespace mtbert {

namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_last_signal{0};

extern "C" void on_parent_signal(int signal) {
  g_last_signal.store(signal);
  g_signals.fetch_add(1);
}

// Forgets the signals a previous group saw, before the handler is installed.
void (*fresh_handler())(int) {
  g_signals.store(0);
  g_last_signal.store(0);
  return on_parent_signal;
}

// This process's environment with `added` (replacing any of the same name).
std::vector<std::string> child_environment(const std::vector<std::string>& added) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(added.begin(), added.end(), [&](const std::string& a) { return a.rfind(name, 0) == 0; }))
      env.push_back(entry);
  }
  env.insert(env.end(), added.begin(), added.end());
  return env;
}

ChildEnd end_of(size_t index, int status, std::chrono::steady_clock::time_point start) {
  ChildEnd end;
  end.index = index;
  end.signaled = WIFSIGNALED(status);
  end.exit_code = end.signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  end.how = end.signaled ? fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
                         : fmt::format("exited with status {}", WEXITSTATUS(status));
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return end;
}

}  // namespace

ChildGroup::ChildGroup() : catcher_(fresh_handler()) {}

ChildGroup::~ChildGroup() {
  for (auto& child : children_)
    if (child.running) {
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, nullptr, 0);
    }
}

bool ChildGroup::start(const std::filesystem::path& executable, const ChildSpec& spec, std::string& error) {
  std::vector<std::string> env = child_environment(spec.environment);
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  for (const auto& [from, to] : spec.descriptors) posix_spawn_file_actions_adddup2(&files, from, to);
  // Inheritable for this child only: children start one at a time, from
  // one thread, and the flag is set back at once.
  const int inherited_flags = spec.inherited_fd >= 0 ? ::fcntl(spec.inherited_fd, F_GETFD) : -1;
  if (inherited_flags >= 0) ::fcntl(spec.inherited_fd, F_SETFD, inherited_flags & ~FD_CLOEXEC);
  pid_t pid = -1;
  const int status = spawn_child(pid, executable, spec.args, envp.data(), &files);
  if (inherited_flags >= 0) ::fcntl(spec.inherited_fd, F_SETFD, inherited_flags);
  posix_spawn_file_actions_destroy(&files);
  if (status != 0) {
    error = fmt::format("cannot start {}: {}", executable.string(), std::strerror(status));
    return false;
  }
  children_.push_back(Child{pid, true, std::chrono::steady_clock::now()});
  return true;
}

bool ChildGroup::any_running() const {
  return std::any_of(children_.begin(), children_.end(), [](const Child& c) { return c.running; });
}

int ChildGroup::signals_received() const { return g_signals.load(); }
int ChildGroup::last_signal() const { return g_last_signal.load(); }

void ChildGroup::signal_running(int signal) {
  for (const auto& child : children_)
    if (child.running) ::kill(child.pid, signal);
}

std::vector<ChildEnd> ChildGroup::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<ChildEnd> ended;
  for (;;) {
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& child = children_[i];
      int status = 0;
      if (!child.running || ::waitpid(child.pid, &status, WNOHANG) != child.pid) continue;
      child.running = false;
      ended.push_back(end_of(i, status, child.start));
    }
    // A signal to this process is news for the caller too.
    if (!ended.empty() || std::chrono::steady_clock::now() >= deadline || !any_running()) return ended;
    const int signals = g_signals.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (g_signals.load() != signals) return ended;
  }
}

}  // namespace mtbert
