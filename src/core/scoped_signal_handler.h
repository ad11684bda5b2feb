#pragma once
// Routes SIGINT and SIGTERM to `handler` for the lifetime of the object and
// restores the previous handlers after: what a parent process (the sweep's
// job runner, the --nproc launcher) uses to pass Ctrl-C on to its children
// instead of dying first.
#include <csignal>

namespace mtbert {

class ScopedSignalHandler {
 public:
  explicit ScopedSignalHandler(void (*handler)(int));
  ~ScopedSignalHandler();
  ScopedSignalHandler(const ScopedSignalHandler&) = delete;
  ScopedSignalHandler& operator=(const ScopedSignalHandler&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace mtbert
