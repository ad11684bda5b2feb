#include "core/utf8_check.h"

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

std::size_t invalid_utf8_offset(std::string_view text) {
  // RFC 3629's table of well-formed sequences: the second byte's range
  // depends on the first, which excludes overlong forms, surrogates
  // (ED A0..BF) and code points above U+10FFFF (F4 90..).
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned char lead = bytes[i];
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > size || bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if ((bytes[i + k] & 0xC0) != 0x80) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::optional<std::string> utf8_problem(std::string_view text, std::string_view part) {
  const std::size_t bad = invalid_utf8_offset(text);
  if (bad == std::string_view::npos) return std::nullopt;
  return fmt::format("invalid UTF-8 at byte {} of {}", bad + 1, part);
}

void check_utf8_line(std::string_view line, std::string_view file, int64_t number) {
  if (const auto problem = utf8_problem(line)) throw UserError(fmt::format("{}:{}: {}", file, number, *problem));
}

}  // namespace mtbert
