#include "dist/local_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
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

constexpr std::string_view kErrorPrefix = "mtbert: error: ";

// A rank's stderr, read from a pipe: passed on to this process's stderr as it
// comes (a partial line at once: a progress bar redraws with \r), except its
// "mtbert: error:" line, which is kept for the launcher to tell or drop.
class RankOutput {
 public:
  explicit RankOutput(int fd) : fd_(fd) {}
  ~RankOutput() {
    if (fd_ >= 0) ::close(fd_);
  }
  RankOutput(const RankOutput&) = delete;
  RankOutput& operator=(const RankOutput&) = delete;

  int fd() const { return fd_; }
  // The error line without its prefix; empty when the rank wrote none.
  const std::string& error_line() const { return error_; }

  // Reads what the pipe holds now (it is non-blocking); at its end, passes on
  // the rest and closes it.
  void read_available() {
    char buffer[4096];
    while (fd_ >= 0) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n > 0) {
        pending_.append(buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      ::close(fd_);  // end of file (every writer has exited), or an error
      fd_ = -1;
    }
    pass_on(fd_ < 0);
  }

  // After the rank has exited: everything it wrote, up to the pipe's end.
  void drain() {
    while (fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, 100);
      read_available();
    }
  }

 private:
  static bool starts_with_prefix(std::string_view line) { return line.substr(0, kErrorPrefix.size()) == kErrorPrefix; }

  void pass_on(bool at_end) {
    size_t start = 0;
    for (size_t stop; (stop = pending_.find_first_of("\r\n", start)) != std::string::npos; start = stop + 1) {
      const std::string_view line(pending_.data() + start, stop - start);
      if (starts_with_prefix(line)) error_ = std::string(line.substr(kErrorPrefix.size()));
      else std::fwrite(pending_.data() + start, 1, stop - start + 1, stderr);
    }
    pending_.erase(0, start);
    const std::string_view rest(pending_);
    const bool may_be_error = kErrorPrefix.substr(0, rest.size()) == rest.substr(0, kErrorPrefix.size());
    if (!rest.empty() && (at_end || !may_be_error)) {
      if (starts_with_prefix(rest)) error_ = std::string(rest.substr(kErrorPrefix.size()));
      else std::fwrite(rest.data(), 1, rest.size(), stderr);
      pending_.clear();
    }
    std::fflush(stderr);
  }

  int fd_;
  std::string pending_;
  std::string error_;
};

// Starts one rank; with `output`, its stderr goes into a new pipe that
// `output` then reads.
pid_t spawn_rank(const std::filesystem::path& executable, const std::vector<std::string>& args,
                 std::vector<std::string> env, std::unique_ptr<RankOutput>* output) {
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  int fds[2] = {-1, -1};
  // Both ends close on exec: the child keeps only the copy on its fd 2.
  if (output && ::pipe2(fds, O_CLOEXEC) != 0)
    throw UserError(fmt::format("cannot open a pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (output) posix_spawn_file_actions_adddup2(&files, fds[1], STDERR_FILENO);
  pid_t pid = -1;
  const int status = spawn_child(pid, executable, args, envp.data(), &files);
  posix_spawn_file_actions_destroy(&files);
  if (output) {
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    *output = std::make_unique<RankOutput>(fds[0]);
  }
  if (status != 0) throw UserError(fmt::format("cannot start {}: {}", executable.string(), std::strerror(status)));
  return pid;
}

// Waits up to `timeout` for output from any rank, and passes it on.
void pass_on_output(const std::vector<std::unique_ptr<RankOutput>>& outputs, std::chrono::milliseconds timeout) {
  std::vector<pollfd> polled;
  std::vector<RankOutput*> owners;
  for (const auto& output : outputs)
    if (output && output->fd() >= 0) {
      polled.push_back({output->fd(), POLLIN, 0});
      owners.push_back(output.get());
    }
  if (polled.empty()) {
    std::this_thread::sleep_for(timeout);
    return;
  }
  if (::poll(polled.data(), polled.size(), static_cast<int>(timeout.count())) <= 0) return;
  for (size_t i = 0; i < polled.size(); ++i)
    if (polled[i].revents != 0) owners[i]->read_available();
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
  std::vector<std::unique_ptr<RankOutput>> outputs(static_cast<size_t>(nproc));  // none for rank 0
  try {
    for (int rank = 0; rank < nproc; ++rank)
      pids.push_back(spawn_rank(executable, args, child_environment(rank, nproc, port),
                                rank == 0 ? nullptr : &outputs[static_cast<size_t>(rank)]));
  } catch (const UserError& e) {
    stop_started_ranks(pids);
    throw UserError(fmt::format("cannot start rank {} of {}: {}; the {} rank(s) already started were stopped",
                                pids.size(), nproc, e.what(), pids.size()));
  }

  LocalLaunchResult result;
  int forwarded = 0;
  // Ranks that failed, in the order they were seen. The first starts a short
  // wait for the others to end on their own (a rank whose input is bad exits
  // with 2 a moment after its peers see the connection drop), then SIGTERM,
  // then SIGKILL after the grace period.
  std::vector<std::pair<size_t, int>> failed;  // rank, wait status
  constexpr auto kSettle = std::chrono::seconds(2);
  const auto never = std::chrono::steady_clock::time_point::max();
  auto terminate_at = never, kill_at = never;
  std::vector<bool> running(pids.size(), true);
  auto any_running = [&] { return std::find(running.begin(), running.end(), true) != running.end(); };
  auto signal_all = [&](int signal) {
    for (size_t r = 0; r < pids.size(); ++r)
      if (running[r]) ::kill(pids[r], signal);
  };
  while (any_running()) {
    if (const int signal = g_signal.load(); signal != 0 && forwarded == 0 && failed.empty()) {
      signal_all(signal);
      forwarded = signal;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now > terminate_at) {
      signal_all(SIGTERM);
      terminate_at = never;
      kill_at = now + grace;
    }
    if (now > kill_at) {
      signal_all(SIGKILL);
      kill_at = never;
    }
    std::vector<std::pair<size_t, int>> ended;  // rank, wait status
    for (size_t r = 0; r < pids.size(); ++r) {
      int status = 0;
      if (!running[r] || ::waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      running[r] = false;
      if (outputs[r]) outputs[r]->drain();
      ended.emplace_back(r, status);
    }
    // When several ended since the last look, one killed by a signal is
    // likelier the cause than one that exited because its peer was gone.
    std::stable_partition(ended.begin(), ended.end(), [](const auto& e) { return WIFSIGNALED(e.second); });
    for (const auto& [r, status] : ended) {
      // A rank that stopped on the signal passed on to it did what it was asked.
      const bool asked = forwarded != 0 && exit_code_of(status) == 128 + forwarded;
      if (exit_code_of(status) == 0 || asked) continue;
      if (failed.empty()) terminate_at = std::chrono::steady_clock::now() + kSettle;
      failed.emplace_back(r, status);
    }
    if (ended.empty()) pass_on_output(outputs, std::chrono::milliseconds(50));
  }
  if (failed.empty()) {
    if (forwarded != 0) result.exit_code = 128 + forwarded;
    return result;
  }
  // A rank that said what was wrong in one line and exited with 2 (bad
  // input) is the one to report, rank 0 first (its line is on the terminal
  // already); else the first that failed.
  auto is_told = [&](const std::pair<size_t, int>& f) {
    return exit_code_of(f.second) == 2 && (f.first == 0 || !outputs[f.first]->error_line().empty());
  };
  auto told = std::find_if(failed.begin(), failed.end(), [&](const auto& f) { return f.first == 0 && is_told(f); });
  if (told == failed.end()) told = std::find_if(failed.begin(), failed.end(), is_told);
  const auto& [rank, status] = told != failed.end() ? *told : failed.front();
  result.failure = fmt::format("rank {} of {} {}", rank, nproc, describe_end(status));
  result.exit_code = exit_code_of(status);
  if (outputs[rank]) result.rank_error = outputs[rank]->error_line();
  result.told = told != failed.end();
  return result;
}

}  // namespace mtbert
