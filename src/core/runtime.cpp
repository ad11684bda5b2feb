#include "core/runtime.h"

#include <torch/version.h>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/console.h"
#include "core/memory_reuse.h"

namespace mtbert {

namespace {

// libgomp spins waiting for work by default, which on a 2-core machine steals
// the cores LibTorch's own threads need: measured here, a BERT training step
// ran about 2x slower (BENCHMARKS.md). The policy is read once when libgomp is
// loaded, before main(), so the only way to set it for ourselves is to re-exec
// with the variable set. A user's own OMP_WAIT_POLICY always stands.
void prefer_passive_openmp_waiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ::execv("/proc/self/exe", argv);
  // exec failed (no /proc?): carry on with the default policy.
}

std::string g_command_line;

}  // namespace

std::string shell_quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                          std::string::npos)
    return arg;
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string command_line() { return g_command_line; }

namespace {

// The last resort for an exception nothing caught (a bug): one line and exit
// code 1, not std::terminate's abort and core dump.
[[noreturn]] void one_line_terminate() {
  std::string what = "an unknown exception";
  if (const auto error = std::current_exception()) {
    try {
      std::rethrow_exception(error);
    } catch (const c10::Error& e) {
      what = first_line(e.what_without_backtrace());
    } catch (const std::exception& e) {
      what = first_line(e.what());
    } catch (...) {
    }
  }
  const std::string line = "mtbert: internal error: " + printable_line(what) + " (std::terminate)\n";
  std::fwrite(line.data(), 1, line.size(), console());
  std::_Exit(1);
}

}  // namespace

void prepare_process(int argc, char** argv) {
  prefer_passive_openmp_waiting(argv);
  std::set_terminate(one_line_terminate);
  // A file-size limit (ulimit -f) then fails the write with EFBIG, which is
  // reported like any failed write, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  keep_freed_memory_for_reuse();
  for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + shell_quoted(argv[i]);
  use_console_logger();
}

std::string torch_version_string() { return TORCH_VERSION; }

std::string first_line(std::string_view message) {
  const auto end = message.find('\n');
  return std::string(message.substr(0, end));
}

std::string printable_line(std::string_view message) {
  std::string line;
  line.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\0') line += "\\0";
    else if (c == '\n') line += "\\n";
    else if (c == '\r') line += "\\r";
    else if (c == '\t') line += "\\t";
    else if (byte < 0x20 || byte == 0x7f) line += fmt::format("\\x{:02x}", byte);
    else line += c;
  }
  return line;
}

}  // namespace mtbert
