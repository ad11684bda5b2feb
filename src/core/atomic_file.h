#pragma once
// Never leave a half-written file behind: write under a temporary name in the
// same directory, then rename over the destination (atomic on POSIX).
#include <filesystem>
#include <functional>
#include <string_view>

namespace mtbert {

// Calls `write(tmp_path)` and renames tmp_path to `path` when it returns.
// If `write` throws, the temporary file is removed and the destination is
// untouched.
void write_atomically(const std::filesystem::path& path,
                      const std::function<void(const std::filesystem::path&)>& write);

// Convenience: write `contents` to `path` atomically.
void write_text_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace mtbert
