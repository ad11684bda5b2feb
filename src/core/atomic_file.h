#pragma once
// Writing files so that a failure is one line naming the file and the OS's
// reason (no space left, read-only file system, file too large, ...), and
// never leaves a half-written file behind: files are written under a
// temporary name in the same directory, then renamed over the destination
// (atomic on POSIX).
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace mtbert {

// A file written with POSIX calls, so that a failure keeps errno. write()
// never throws and always reports the whole size written: after a failure it
// only remembers the first errno and skips the rest. That makes it safe as
// LibTorch's archive writer callback, where a short write would make the
// writer's destructor throw (std::terminate). finish() reports the failure.
class FileWriter {
 public:
  // Creates (or truncates, or with `append` appends to) `file`; `shown` is the
  // name errors give (the destination, for a temporary file).
  FileWriter(const std::filesystem::path& file, std::string shown, bool append = false);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  std::size_t write(const void* data, std::size_t size) noexcept;
  void write(std::string_view text) noexcept { write(text.data(), text.size()); }

  // Closes the file; UserError "cannot write SHOWN: REASON" if any write or
  // the close failed.
  void finish();

 private:
  int fd_ = -1;
  int error_ = 0;
  std::string shown_;
};

// UserError unless a file can be written at `path`: not a directory, and in
// a directory that exists (checked before work whose result goes there).
void check_output_path(const std::filesystem::path& path);

// Writes `path` through `write` under a temporary name beside it, then renames
// it over `path`. If anything fails (`write` throws, a write or the rename
// fails), the temporary file is removed, `path` is untouched, and the error
// names `path`.
void write_file_atomically(const std::filesystem::path& path, const std::function<void(FileWriter&)>& write);

// Convenience: `contents` into `path`, atomically.
void write_text_atomically(const std::filesystem::path& path, std::string_view contents);

// One line of text appended to `path` (a log such as metrics.jsonl).
void append_line(const std::filesystem::path& path, std::string_view line);

}  // namespace mtbert
