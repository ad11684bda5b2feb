#include "core/runtime.h"

#include <torch/version.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>

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

void prepare_process(int argc, char** argv) {
  prefer_passive_openmp_waiting(argv);
  keep_freed_memory_for_reuse();
  for (int i = 0; i < argc; ++i) g_command_line += (i ? " " : "") + shell_quoted(argv[i]);
  auto logger = spdlog::stderr_color_mt("mtbert");
  logger->set_pattern("%^[%H:%M:%S %l]%$ %v");
  spdlog::set_default_logger(logger);
}

std::string torch_version_string() { return TORCH_VERSION; }

std::string first_line(std::string_view message) {
  const auto end = message.find('\n');
  return std::string(message.substr(0, end));
}

}  // namespace mtbert
