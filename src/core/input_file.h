#pragma once
// Opening a file the user named. What stands at the path is checked before it
// is opened, so that each mistake gets its own cause in one line naming the
// path: no such file, a directory, a FIFO (which would block the reader
// forever), a socket or device, a file far larger than what it should be, or
// the OS's reason (permissions, I/O errors).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace mtbert {

// UserError "PATH: <cause>" unless PATH is a regular file this process may
// read. Returns its size in bytes.
std::uint64_t check_input_file(const std::filesystem::path& path);

// The whole file. A file over `max_bytes` is "PATH: N bytes; a WHAT is at
// most M (is it the right file?)"; a failed read names the OS's reason.
std::string read_input_file(const std::filesystem::path& path, std::uint64_t max_bytes, std::string_view what);

// A stream on the file, for readers that go through it piece by piece.
std::ifstream open_input_file(const std::filesystem::path& path);

// "1.5 GB" style sizes for messages.
std::string describe_bytes(std::uint64_t bytes);

}  // namespace mtbert
