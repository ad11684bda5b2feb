#include "core/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace fs = std::filesystem;

void write_atomically(const fs::path& path, const std::function<void(const fs::path&)>& write) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UserError(fmt::format("cannot write {}: directory {} does not exist", path.string(), dir.string()));
  }
  const fs::path tmp = dir / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  try {
    write(tmp);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw UserError(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  }
}

void write_text_atomically(const fs::path& path, std::string_view contents) {
  write_atomically(path, [&](const fs::path& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) throw UserError(fmt::format("cannot write {}: write failed (disk full?)", path.string()));
  });
}

}  // namespace mtbert
