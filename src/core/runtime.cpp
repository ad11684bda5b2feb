#include "core/runtime.h"

#include <torch/version.h>
#include <ATen/Parallel.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <thread>

namespace mtbert {

void prepare_process(int /*argc*/, char** /*argv*/) {
  auto logger = spdlog::stderr_color_mt("mtbert");
  logger->set_pattern("%^[%H:%M:%S %l]%$ %v");
  spdlog::set_default_logger(logger);
}

int set_thread_count(int threads) {
  if (threads <= 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    threads = hw == 0 ? 1 : static_cast<int>(hw);
  }
  at::set_num_threads(threads);
  return at::get_num_threads();
}

std::string torch_version_string() { return TORCH_VERSION; }

std::string first_line(std::string_view message) {
  const auto end = message.find('\n');
  return std::string(message.substr(0, end));
}

}  // namespace mtbert
