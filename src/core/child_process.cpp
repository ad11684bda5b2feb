#include "core/child_process.h"

#include <signal.h>

extern char** environ;

namespace mtbert {

int spawn_child(pid_t& pid, const std::filesystem::path& executable, const std::vector<std::string>& args,
                char* const* envp, const posix_spawn_file_actions_t* files) {
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv{const_cast<char*>(executable.c_str())};
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int status = posix_spawn(&pid, executable.c_str(), files, &attributes, argv.data(), envp ? envp : environ);
  posix_spawnattr_destroy(&attributes);
  return status;
}

}  // namespace mtbert
