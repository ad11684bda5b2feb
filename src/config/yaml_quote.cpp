#include "config/yaml_quote.h"

#include <fmt/format.h>

namespace mtbert {

std::string yaml_double_quoted(const std::string& text, Dollars dollars) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c == '$' && dollars == Dollars::escape) out += "$$";
        else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += ch;  // UTF-8 bytes pass through: YAML is UTF-8
    }
  }
  return out + "\"";
}

}  // namespace mtbert
