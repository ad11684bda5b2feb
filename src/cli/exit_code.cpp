// The process exit code a subcommand asks for (see commands.h).
#include "cli/commands.h"

namespace mtbert::cli {

namespace {
int g_exit_code = 0;
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace mtbert::cli
