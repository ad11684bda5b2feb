#include "dist/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/child_process.h"
#include "core/scoped_signal_handler.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/launcher_watch.h"

extern char** environ;

namespace mtbert {

namespace {

std::atomic<int> g_signal{0};

extern "C" void on_launcher_signal(int signal) { g_signal.store(signal); }

// Forgets the signals a previous run saw, before the handler is installed.
void reset_signal_state() {
  g_signal.store(0);
}

// This process's environment without the variables the launcher sets, and
// with each rank's share of the cores in OMP_NUM_THREADS unless the user set
// it, as torchrun does: the BLAS library and OpenMP read it when they load,
// before the rank sets its own thread count (core/thread_count.h). The
// launcher's pid lets each rank end with it (dist/launcher_watch.h).
std::vector<std::string> child_environment(int rank, int nproc, int port) {
  const std::string launcher = std::string(kLauncherPidVariable) + "=";
  const char* ours[] = {"RANK=", "WORLD_SIZE=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=", "MASTER_PORT=",
                        launcher.c_str()};
  std::vector<std::string> env;
  bool threads_set = false;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const char* prefix : ours) replaced = replaced || entry.rfind(prefix, 0) == 0;
    if (!replaced) env.push_back(entry);
    threads_set = threads_set || entry.rfind("OMP_NUM_THREADS=", 0) == 0;
  }
  env.push_back(fmt::format("RANK={}", rank));
  env.push_back(fmt::format("WORLD_SIZE={}", nproc));
  env.push_back(fmt::format("LOCAL_RANK={}", rank));
  env.push_back(fmt::format("LOCAL_WORLD_SIZE={}", nproc));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back(fmt::format("MASTER_PORT={}", port));
  env.push_back(fmt::format("{}{}", launcher, ::getpid()));
  if (!threads_set) env.push_back(fmt::format("OMP_NUM_THREADS={}", std::max(1, available_cores() / nproc)));
  return env;
}

pid_t spawn_rank(const std::filesystem::path& executable, const std::vector<std::string>& args,
                 std::vector<std::string> env) {
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int status = spawn_child(pid, executable, args, envp.data());
  if (status != 0) throw UserError(fmt::format("cannot start {}: {}", executable.string(), std::strerror(status)));
  return pid;
}

// Stops ranks already started when a later one cannot start: SIGTERM, then
// SIGKILL after a few seconds, each reaped (none is left to wait at the
// rendezvous for the timeout, or to outlive the launcher).
void stop_started_ranks(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::vector<pid_t> left = pids;
  while (!left.empty()) {
    if (std::chrono::steady_clock::now() > deadline)
      for (const pid_t pid : left) ::kill(pid, SIGKILL);
    std::vector<pid_t> still;
    for (const pid_t pid : left) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) != pid) still.push_back(pid);
    }
    left = std::move(still);
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string describe_end(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw UserError(fmt::format("cannot open a socket: {}", std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw UserError(fmt::format("cannot find a free port on 127.0.0.1: {}", std::strerror(errno)));
  return ntohs(address.sin_port);
}

LocalLaunchResult run_local_ranks(const std::filesystem::path& executable, const std::vector<std::string>& args,
                                  int nproc, std::chrono::seconds grace) {
  if (nproc < 1) throw UserError(fmt::format("--nproc must be at least 1, got {}", nproc));
  reset_signal_state();
  const ScopedSignalHandler catcher(on_launcher_signal);
  const int port = free_local_port();
  std::vector<pid_t> pids;
  try {
    for (int rank = 0; rank < nproc; ++rank)
      pids.push_back(spawn_rank(executable, args, child_environment(rank, nproc, port)));
  } catch (const UserError& e) {
    stop_started_ranks(pids);
    throw UserError(fmt::format("cannot start rank {} of {}: {}; the {} rank(s) already started were stopped",
                                pids.size(), nproc, e.what(), pids.size()));
  }

  LocalLaunchResult result;
  int forwarded = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  std::vector<bool> running(pids.size(), true);
  auto any_running = [&] { return std::find(running.begin(), running.end(), true) != running.end(); };
  auto signal_all = [&](int signal) {
    for (size_t r = 0; r < pids.size(); ++r)
      if (running[r]) ::kill(pids[r], signal);
  };
  while (any_running()) {
    if (const int signal = g_signal.load(); signal != 0 && forwarded == 0 && result.failure.empty()) {
      signal_all(signal);
      forwarded = signal;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      signal_all(SIGKILL);
      deadline = std::chrono::steady_clock::time_point::max();
    }
    std::vector<std::pair<size_t, int>> ended;  // rank, wait status
    for (size_t r = 0; r < pids.size(); ++r) {
      int status = 0;
      if (!running[r] || ::waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      running[r] = false;
      ended.emplace_back(r, status);
    }
    // The rank that failed first is the one to name; when several ended
    // since the last look, one killed by a signal is likelier the cause than
    // one that exited because its peer was gone.
    std::stable_partition(ended.begin(), ended.end(), [](const auto& e) { return WIFSIGNALED(e.second); });
    for (const auto& [r, status] : ended) {
      // A rank that stopped on the signal passed on to it did what it was asked.
      const bool asked = forwarded != 0 && exit_code_of(status) == 128 + forwarded;
      if (exit_code_of(status) == 0 || asked || !result.failure.empty()) continue;
      result.failure = fmt::format("rank {} of {} {}", r, nproc, describe_end(status));
      result.exit_code = exit_code_of(status);
      signal_all(SIGTERM);
      deadline = std::chrono::steady_clock::now() + grace;
    }
    const bool reaped = !ended.empty();
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (result.failure.empty() && forwarded != 0) result.exit_code = 128 + forwarded;
  return result;
}

}  // namespace mtbert
