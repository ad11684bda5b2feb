#include "dist/rank_files.h"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/console.h"
#include "core/json_file.h"

namespace mtbert {

namespace {

std::filesystem::path g_error_file;  // empty: not a rank of the launcher

const char* kind_name(RankErrorKind kind) {
  switch (kind) {
    case RankErrorKind::user: return "user";
    case RankErrorKind::peer: return "peer";
    case RankErrorKind::internal: break;
  }
  return "internal";
}

// The variable's value, removed from the environment.
std::string take_variable(const char* name) {
  const char* value = std::getenv(name);
  std::string text = value ? value : "";
  ::unsetenv(name);
  return text;
}

}  // namespace

void use_rank_files() {
  const std::string console_fd = take_variable(kRankConsoleVariable);
  g_error_file = take_variable(kRankErrorVariable);
  // A descriptor that is not usable leaves mtbert's output on stderr: in the
  // rank's log, where the launcher names it when the rank fails.
  if (!console_fd.empty()) {
    char* end = nullptr;
    const long fd = std::strtol(console_fd.c_str(), &end, 10);
    if (end != console_fd.c_str() && *end == '\0' && fd > 2 && fd < 1024) use_console(static_cast<int>(fd));
  }
}

bool leave_rank_error(const RankError& error) {
  if (g_error_file.empty()) return false;
  try {
    write_text_atomically(g_error_file, json_text(nlohmann::json{{"kind", kind_name(error.kind)}, {"line", error.line}}));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::optional<RankError> read_rank_error(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  try {
    const nlohmann::json json = read_json_file(file);
    RankError error;
    const std::string kind = json.value("kind", "");
    error.kind = kind == "user" ? RankErrorKind::user : kind == "peer" ? RankErrorKind::peer : RankErrorKind::internal;
    error.line = json.value("line", "");
    return error;
  } catch (const std::exception&) {
    return std::nullopt;  // not one a rank wrote
  }
}

}  // namespace mtbert
