#include "core/utf8_check.h"

#include "core/user_error.h"
#include "support/test_support.h"

using mtbert::invalid_utf8_offset;
using mtbert::utf8_problem;

TEST_CASE("valid UTF-8 has no invalid offset", "[utf8]") {
  CHECK(invalid_utf8_offset("") == std::string_view::npos);
  CHECK(invalid_utf8_offset("plain ascii") == std::string_view::npos);
  CHECK(invalid_utf8_offset("H\xC3\xA9llo \xE5\x8D\x9A \xF0\x9F\x8D\x95") == std::string_view::npos);
  CHECK(invalid_utf8_offset(std::string_view("a\0b", 3)) == std::string_view::npos);
}

TEST_CASE("invalid UTF-8 is found at its first byte", "[utf8]") {
  CHECK(invalid_utf8_offset("ab\xFF") == 2);            // never valid
  CHECK(invalid_utf8_offset("\x80") == 0);              // lone continuation byte
  CHECK(invalid_utf8_offset("x\xC3") == 1);             // truncated sequence
  CHECK(invalid_utf8_offset("\xC0\xAF") == 0);          // overlong "/"
  CHECK(invalid_utf8_offset("ok \xED\xA0\x80") == 3);   // UTF-8-encoded surrogate U+D800
  CHECK(invalid_utf8_offset("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(invalid_utf8_offset("\xE2\x82"
                            "A") == 0);  // sequence cut by an ASCII byte
}

TEST_CASE("text that is not UTF-8 is named in one form, counting bytes from 1", "[utf8]") {
  CHECK_FALSE(utf8_problem("caf\xC3\xA9").has_value());
  CHECK(utf8_problem("ab\xFF") == "invalid UTF-8 at byte 3 of the line");
  CHECK(utf8_problem("\x80", "sentence1") == "invalid UTF-8 at byte 1 of sentence1");

  CHECK_NOTHROW(mtbert::check_utf8_line("fine", "corpus.txt", 1));
  CHECK_THROWS_AS(mtbert::check_utf8_line("bad \xFF", "corpus.txt", 7), mtbert::UserError);
  CHECK_THROWS_WITH(mtbert::check_utf8_line("bad \xFF", "corpus.txt", 7),
                    "corpus.txt:7: invalid UTF-8 at byte 5 of the line");
}
