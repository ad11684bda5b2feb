#pragma once
// The children one parent supervises: the sweep's runs (sweep/sweep_jobs.h)
// and the --nproc launcher's ranks (dist/local_launcher.h). Each child
// starts in a process group of its own (core/child_process.h), so a
// terminal's Ctrl-C reaches only the parent; while the group lives, SIGINT
// and SIGTERM to the parent are caught, counted and left to the caller to
// pass on (signal_running), each by its own rule.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/scoped_signal_handler.h"

namespace mtbert {

struct ChildSpec {
  std::vector<std::string> args;         // after the executable
  std::vector<std::string> environment;  // NAME=value added to this process's, replacing any of the same name
  // Descriptors of this process the child gets as the given numbers
  // (stdin, stdout, stderr or any other), in this order (a later one's
  // source must not be an earlier one's number); the others it inherits as
  // they are.
  std::vector<std::pair<int, int>> descriptors;
  // A descriptor the child inherits as itself although it closes on exec
  // here (others started meanwhile do not get it); -1: none.
  int inherited_fd = -1;
};

// A child that ended: its wait status, as an exit code and in words.
struct ChildEnd {
  size_t index = 0;  // in the order of start()
  int exit_code = 0;  // the exit status; 128 + N when signal N ended it
  bool signaled = false;
  std::string how;    // "exited with status 2", "was killed by signal 9 (Killed)"
  double seconds = 0;
};

class ChildGroup {
 public:
  ChildGroup();
  ~ChildGroup();  // stops (SIGKILL) and reaps any child still running
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  // Starts `executable` as child number size() - 1; false (and why, in
  // `error`) when it cannot.
  bool start(const std::filesystem::path& executable, const ChildSpec& spec, std::string& error);
  size_t size() const { return children_.size(); }
  bool running(size_t index) const { return children_[index].running; }
  bool any_running() const;

  // How many SIGINT or SIGTERM this process got since the group was made,
  // and the last one (0: none).
  int signals_received() const;
  int last_signal() const;

  void signal_running(int signal);

  // Waits up to `timeout` for children to end; those that ended, reaped.
  std::vector<ChildEnd> wait(std::chrono::milliseconds timeout);

 private:
  struct Child {
    pid_t pid = -1;
    bool running = false;
    std::chrono::steady_clock::time_point start;
  };
  ScopedSignalHandler catcher_;
  std::vector<Child> children_;
};

}  // namespace mtbert
