#pragma once
// Process-wide set-up shared by the CLI, tests and benchmarks: logging, the
// command line, and small facts about the LibTorch we run on (the thread
// count is core/thread_count.h).
#include <string>
#include <string_view>

namespace mtbert {

// Call first thing in main(): makes OpenMP threads wait passively (re-executing
// the program once with OMP_WAIT_POLICY=PASSIVE unless the user set it), keeps
// freed memory for reuse (core/memory_reuse.h), and sets up logging (to
// stderr, so that stdout stays machine-readable).
void prepare_process(int argc, char** argv);

// The command line this process was started with, shell-quoted where needed
// (recorded by prepare_process; runs write it into their summary).
std::string command_line();

// `arg` as one word for a POSIX shell: as it is when that is safe, else in
// single quotes.
std::string shell_quoted(const std::string& arg);

// "1.13.1" style version of the LibTorch we were built against.
std::string torch_version_string();

// The first line of a (possibly multi-line) message.
std::string first_line(std::string_view message);

// `message` as one printable line: control characters (a NUL or a newline
// echoed from a user's file) are written as escapes (\0, \n, \x1b); UTF-8
// stays as it is.
std::string printable_line(std::string_view message);

}  // namespace mtbert
