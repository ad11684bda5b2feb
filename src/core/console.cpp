#include "core/console.h"

#include <fcntl.h>

#include <memory>

#include <spdlog/sinks/ansicolor_sink.h>
#include <spdlog/spdlog.h>

namespace mtbert {

namespace {

std::FILE* g_console = nullptr;  // null: stderr

}  // namespace

std::FILE* console() { return g_console ? g_console : stderr; }

bool use_console(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) return false;
  std::FILE* stream = ::fdopen(fd, "w");
  if (!stream) return false;
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  std::setvbuf(stream, nullptr, _IONBF, 0);  // as stderr: each line reaches the terminal when written
  g_console = stream;
  use_console_logger();
  return true;
}

void use_console_logger() {
  auto sink = std::make_shared<spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>>(
      console(), spdlog::color_mode::automatic);
  auto logger = std::make_shared<spdlog::logger>("mtbert", std::move(sink));
  logger->set_pattern("%^[%H:%M:%S %l]%$ %v");
  spdlog::set_default_logger(logger);
}

}  // namespace mtbert
