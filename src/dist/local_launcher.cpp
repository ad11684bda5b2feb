#include "dist/local_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/child_group.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/launcher_watch.h"
#include "dist/rank_files.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

// Each rank's share of the cores in OMP_NUM_THREADS unless the user set it,
// as torchrun does: the BLAS library and OpenMP read it when they load,
// before the rank sets its own thread count (core/thread_count.h). The
// launcher's pid lets each rank end with it (dist/launcher_watch.h); the
// console descriptor and the error file are the rank's (dist/rank_files.h).
std::vector<std::string> rank_environment(int rank, int nproc, int port, const fs::path& error_file) {
  std::vector<std::string> env{fmt::format("RANK={}", rank),
                               fmt::format("WORLD_SIZE={}", nproc),
                               fmt::format("LOCAL_RANK={}", rank),
                               fmt::format("LOCAL_WORLD_SIZE={}", nproc),
                               "MASTER_ADDR=127.0.0.1",
                               fmt::format("MASTER_PORT={}", port),
                               fmt::format("{}={}", kLauncherPidVariable, ::getpid()),
                               fmt::format("{}={}", kRankConsoleVariable, kRankConsoleFd),
                               fmt::format("{}={}", kRankErrorVariable, error_file.string())};
  if (!std::getenv("OMP_NUM_THREADS"))
    env.push_back(fmt::format("OMP_NUM_THREADS={}", std::max(1, available_cores() / nproc)));
  return env;
}

// The folder of the ranks' logs and error files: MTBERT_RANK_LOGS when the
// user names one (kept), else a fresh one under the temporary folder,
// removed unless a rank failed in a way its one line does not tell.
class RankFolder {
 public:
  RankFolder() {
    if (const char* chosen = std::getenv("MTBERT_RANK_LOGS"); chosen && *chosen) {
      path_ = chosen;
      std::error_code ec;
      fs::create_directories(path_, ec);
      if (ec) throw UserError(fmt::format("MTBERT_RANK_LOGS: cannot create {}: {}", path_.string(), ec.message()));
      keep_ = true;
      return;
    }
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "mtbert-ranks-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw UserError(fmt::format("cannot create a folder for the ranks' logs ({}): {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~RankFolder() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  RankFolder(const RankFolder&) = delete;
  RankFolder& operator=(const RankFolder&) = delete;

  fs::path log(int rank) const { return path_ / fmt::format("rank{}.log", rank); }
  fs::path error_file(int rank) const { return path_ / fmt::format("rank{}.error", rank); }
  const fs::path& path() const { return path_; }
  void keep() { keep_ = true; }

 private:
  fs::path path_;
  bool keep_ = false;
};

// A descriptor closed when this object goes.
struct Descriptor {
  int fd = -1;
  explicit Descriptor(int fd) : fd(fd) {}
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
};

struct Failure {
  ChildEnd end;
  std::optional<RankError> error;
  // A rank that lost its peer (or timed out waiting for it) failed because
  // of another rank, which is the one to report.
  bool consequence() const { return error && error->kind == RankErrorKind::peer; }
  // Bad input, said in one line: nothing to add to it.
  bool told() const { return end.exit_code == 2 && error && error->kind == RankErrorKind::user; }
};

// The line without "mtbert: error: ": what the launcher's own error adds.
std::string without_prefix(const std::string& line) {
  constexpr std::string_view prefix = "mtbert: error: ";
  return line.rfind(prefix, 0) == 0 ? line.substr(prefix.size()) : line;
}

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

LocalLaunchResult run_local_ranks(const fs::path& executable, const std::vector<std::string>& args, int nproc,
                                  std::chrono::seconds grace) {
  if (nproc < 1) throw UserError(fmt::format("--nproc must be at least 1, got {}", nproc));
  const int port = free_local_port();
  RankFolder folder;
  // This process's stderr, for the ranks' own output (their console).
  const Descriptor console(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 10));
  if (console.fd < 0) throw UserError(fmt::format("cannot pass stderr on to the ranks: {}", std::strerror(errno)));
  ChildGroup ranks;
  for (int rank = 0; rank < nproc; ++rank) {
    const Descriptor log(::open(folder.log(rank).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    ChildSpec spec;
    spec.args = args;
    spec.environment = rank_environment(rank, nproc, port, folder.error_file(rank));
    // The log first: it may have been opened as descriptor 3, which the
    // console then replaces (the console's copy here is 10 or above).
    if (log.fd >= 0) spec.descriptors.emplace_back(log.fd, STDERR_FILENO);
    spec.descriptors.emplace_back(console.fd, kRankConsoleFd);
    std::string error = log.fd < 0 ? fmt::format("cannot open {}: {}", folder.log(rank).string(), std::strerror(errno))
                                   : std::string();
    if (error.empty() && ranks.start(executable, spec, error)) continue;
    // The ranks already started are stopped and reaped with the group: none
    // is left to wait at the rendezvous for the timeout.
    throw UserError(fmt::format("cannot start rank {} of {}: {}; the {} rank(s) already started were stopped", rank,
                                nproc, error, rank));
  }

  // When a rank fails, the others get a moment to end on their own before
  // SIGTERM (then SIGKILL after the grace period): bad input is met by every
  // rank at once, and each clears what it started (rank 0 its run folder);
  // a rank whose peer is gone fails at its next collective. Not a fixed
  // wait: the launcher returns as soon as the last rank has ended.
  constexpr auto kSettle = std::chrono::seconds(2);
  const auto never = std::chrono::steady_clock::time_point::max();
  auto terminate_at = never, kill_at = never;
  int forwarded = 0;
  std::vector<Failure> failed;
  while (ranks.any_running()) {
    if (ranks.signals_received() > 0 && forwarded == 0 && failed.empty()) {
      forwarded = ranks.last_signal();
      ranks.signal_running(forwarded);  // once: the ranks save a checkpoint and stop together
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= terminate_at) {
      ranks.signal_running(SIGTERM);
      terminate_at = never;
      kill_at = now + grace;
    }
    if (now >= kill_at) {
      ranks.signal_running(SIGKILL);
      kill_at = never;
    }
    for (const ChildEnd& end : ranks.wait(std::chrono::milliseconds(50))) {
      // A rank that stopped on the signal passed on to it did what it was asked.
      if (end.exit_code == 0 || (forwarded != 0 && end.exit_code == 128 + forwarded)) continue;
      if (failed.empty()) terminate_at = std::chrono::steady_clock::now() + kSettle;
      failed.push_back(Failure{end, read_rank_error(folder.error_file(static_cast<int>(end.index)))});
    }
  }

  LocalLaunchResult result;
  if (failed.empty()) {
    if (forwarded != 0) result.exit_code = 128 + forwarded;
    return result;
  }
  // The rank to report: one that told its bad input in one line, rank 0
  // first; else the first that failed for a reason of its own; else the
  // first.
  auto pick = std::find_if(failed.begin(), failed.end(),
                           [](const Failure& f) { return f.told() && f.end.index == 0; });
  if (pick == failed.end()) pick = std::find_if(failed.begin(), failed.end(), [](const Failure& f) { return f.told(); });
  if (pick == failed.end())
    pick = std::find_if(failed.begin(), failed.end(), [](const Failure& f) { return !f.consequence(); });
  if (pick == failed.end()) pick = failed.begin();
  result.failure = fmt::format("rank {} of {} {}", pick->end.index, nproc, pick->end.how);
  result.exit_code = pick->end.exit_code;
  result.told = pick->told();
  if (pick->error) result.rank_error = without_prefix(pick->error->line);
  if (!result.told) {
    folder.keep();
    result.logs = folder.path();
  }
  return result;
}

}  // namespace mtbert
