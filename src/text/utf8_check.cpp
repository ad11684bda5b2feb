#include "text/utf8_check.h"

#include <utf8proc.h>

namespace mtbert {

std::size_t invalid_utf8_offset(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  std::size_t i = 0;
  while (i < text.size()) {
    if (bytes[i] < 0x80) {
      ++i;
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t len = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(text.size() - i), &cp);
    if (len <= 0) return i;
    i += static_cast<std::size_t>(len);
  }
  return std::string_view::npos;
}

}  // namespace mtbert
