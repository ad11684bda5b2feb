#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace fs = std::filesystem;

FileWriter::FileWriter(const fs::path& file, std::string shown, bool append) : shown_(std::move(shown)) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd_ < 0) throw UserError(fmt::format("cannot write {}: {}", shown_, std::strerror(errno)));
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileWriter::write(const void* data, std::size_t size) noexcept {
  const char* bytes = static_cast<const char*>(data);
  std::size_t done = 0;
  while (error_ == 0 && done < size) {
    const ssize_t n = ::write(fd_, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error_ = errno;
    else done += static_cast<std::size_t>(n);
  }
  return size;
}

void FileWriter::finish() {
  if (fd_ >= 0 && ::close(fd_) != 0 && error_ == 0) error_ = errno;
  fd_ = -1;
  if (error_ != 0) throw UserError(fmt::format("cannot write {}: {}", shown_, std::strerror(error_)));
}

void check_output_path(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UserError(fmt::format("cannot write {}: it is a directory; give a file name", path.string()));
  if (!fs::is_directory(dir, ec))
    throw UserError(fmt::format("cannot write {}: directory {} does not exist", path.string(), dir.string()));
}

void write_file_atomically(const fs::path& path, const std::function<void(FileWriter&)>& write) {
  check_output_path(path);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  const fs::path tmp = dir / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  try {
    FileWriter out(tmp, path.string());
    write(out);
    out.finish();
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string reason = ec.message();
    fs::remove(tmp, ec);
    throw UserError(fmt::format("cannot write {}: {}", path.string(), reason));
  }
}

void write_text_atomically(const fs::path& path, std::string_view contents) {
  write_file_atomically(path, [&](FileWriter& out) { out.write(contents); });
}

void append_line(const fs::path& path, std::string_view line) {
  FileWriter out(path, path.string(), /*append=*/true);
  out.write(line);
  out.write("\n");
  out.finish();
}

}  // namespace mtbert
