#pragma once
// Where mtbert's own output goes: its log lines, progress bars and error
// lines. Normally that is the process's stderr. A rank of the --nproc
// launcher has its descriptor 2 on its log file, where LibTorch's warnings
// and Gloo's or NCCL's INFO lines go, and the terminal on another
// descriptor, so that library chatter stays out of the user's terminal while
// mtbert's own output still reaches it (dist/rank_files.h).
#include <cstdio>

namespace mtbert {

std::FILE* console();

// Makes the open descriptor `fd` the console (closed on exec: a process this
// one starts writes to its own stderr); the default logger follows. False,
// with nothing changed, when `fd` is not open for writing.
bool use_console(int fd);

// Makes mtbert's logger, on the console, the default one.
void use_console_logger();

}  // namespace mtbert
