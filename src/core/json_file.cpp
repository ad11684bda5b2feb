#include "core/json_file.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/user_error.h"

namespace mtbert {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("cannot open {}", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset where parsing stopped; the message already says why.
    throw UserError(fmt::format("{}: invalid JSON at byte {}: {}", path.string(), e.byte,
                                std::string(e.what()).substr(std::string(e.what()).find(':') + 2)));
  }
}

}  // namespace mtbert
