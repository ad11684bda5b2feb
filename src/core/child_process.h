#pragma once
// Starting a child process the way a ChildGroup (core/child_group.h: the
// sweep's job runner, the --nproc launcher) needs it: in a process group of
// its own, so that a terminal's Ctrl-C reaches only the parent (which passes
// it on), with SIGINT and SIGTERM back at their defaults and unblocked in
// the child.
#include <spawn.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace mtbert {

// posix_spawn of `executable args...` into `pid`; `envp` null: this process's
// environment; `files` null: the descriptors as they are. Returns
// posix_spawn's status (0, or an errno value).
int spawn_child(pid_t& pid, const std::filesystem::path& executable, const std::vector<std::string>& args,
                char* const* envp = nullptr, const posix_spawn_file_actions_t* files = nullptr);

}  // namespace mtbert
