#include "dist/launcher_watch.h"

#include <signal.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <spdlog/spdlog.h>

namespace mtbert {

void follow_launcher() {
  const char* text = std::getenv(kLauncherPidVariable);
  if (!text) return;
  char* end = nullptr;
  const long launcher = std::strtol(text, &end, 10);
  const bool valid = end != text && *end == '\0' && launcher > 1;
  const std::string value(text);
  ::unsetenv(kLauncherPidVariable);
  if (!valid) {
    spdlog::warn("{}=\"{}\" is not a process id: this rank will not stop with its launcher", kLauncherPidVariable,
                 value);
    return;
  }
#ifdef __linux__
  // The kernel sends the signal when the thread that started this process
  // ends: the launcher spawns its ranks from its main thread, which lives
  // as long as the launcher.
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) {
    spdlog::warn("prctl(PR_SET_PDEATHSIG): {}; this rank will not stop with its launcher", std::strerror(errno));
    return;
  }
  if (::getppid() != static_cast<pid_t>(launcher)) ::raise(SIGTERM);
#endif
}

}  // namespace mtbert
