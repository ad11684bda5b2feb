#pragma once
// Validation of UTF-8 input at the edges of the program (stdin lines, training
// files), so that a user learns which line of their data is broken instead of
// getting silently altered tokens.
#include <cstddef>
#include <string_view>

namespace mtbert {

// Byte offset of the first byte that does not start a valid UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are invalid, as
// for Python's decoder), or std::string_view::npos when `text` is valid.
std::size_t invalid_utf8_offset(std::string_view text);

}  // namespace mtbert
