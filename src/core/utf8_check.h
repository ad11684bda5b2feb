#pragma once
// Validation of UTF-8 input at the edges of the program (data rows, corpus and
// vocabulary lines, stdin lines, --text options), so that a user learns which
// line of their data is broken instead of getting silently altered tokens.
// Every such check says it in one form, counting from 1 as editors do:
//
//   <file>:<line>: invalid UTF-8 at byte <b> of the line
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mtbert {

// Byte offset of the first byte that does not start a valid UTF-8 sequence
// (overlong forms, surrogates and code points above U+10FFFF are invalid, as
// for Python's decoder), or std::string_view::npos when `text` is valid.
std::size_t invalid_utf8_offset(std::string_view text);

// "invalid UTF-8 at byte <b> of <part>" (b from 1) when `text` is not valid
// UTF-8, for a caller that names the place itself (a data row's field, a
// command-line option); none when it is.
std::optional<std::string> utf8_problem(std::string_view text, std::string_view part = "the line");

// Throws UserError "<file>:<line>: invalid UTF-8 at byte <b> of the line" when
// `line` (line number `number`, from 1, of `file`) is not valid UTF-8.
void check_utf8_line(std::string_view line, std::string_view file, int64_t number);

}  // namespace mtbert
