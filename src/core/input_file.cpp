#include "core/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

// What is wrong with a file of this mode, or "" for a regular file.
std::string not_a_file(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "is a directory, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is a device, not a regular file";
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& cause) {
  throw UserError(fmt::format("{}: {}", path.string(), cause));
}

std::string errno_cause(int error) {
  return error == ENOENT ? std::string("no such file") : fmt::format("cannot read: {}", std::strerror(error));
}

}  // namespace

std::string describe_bytes(std::uint64_t bytes) {
  const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::uint64_t check_input_file(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, errno_cause(errno));
  if (const std::string cause = not_a_file(st.st_mode); !cause.empty()) fail(path, cause);
  if (::access(path.c_str(), R_OK) != 0) fail(path, errno_cause(errno));
  return static_cast<std::uint64_t>(st.st_size);
}

std::string read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what) {
  check_input_file(path);
  // O_NONBLOCK: should the path have become a FIFO since the check, opening
  // it does not wait for a writer; fstat below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(path, errno_cause(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, errno_cause(errno));
  if (const std::string cause = not_a_file(st.st_mode); !cause.empty()) fail(path, cause);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes)
    fail(path, fmt::format("{}; a {} is at most {} (is it the right file?)", describe_bytes(size), what,
                           describe_bytes(max_bytes)));
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, errno_cause(errno));
    if (n == 0) break;  // shrank while we read: what is there
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

std::ifstream open_input_file(const std::filesystem::path& path) {
  check_input_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, errno_cause(errno));
  return in;
}

}  // namespace mtbert
