#include "text/special_token_splitter.h"

#include "support/test_support.h"

namespace {

using Segment = std::pair<std::string, int64_t>;

std::vector<Segment> segments(const mtbert::SpecialTokenSplitter& splitter, std::string_view text) {
  std::vector<Segment> out;
  splitter.for_each_segment(text, [&](std::string_view s, int64_t id) { out.emplace_back(std::string(s), id); });
  return out;
}

mtbert::SpecialTokenSplitter bert_splitter() {
  return mtbert::SpecialTokenSplitter({{"[PAD]", 0}, {"[UNK]", 100}, {"[CLS]", 101}, {"[SEP]", 102}, {"[MASK]", 103}});
}

}  // namespace

TEST_CASE("text without special tokens is one segment", "[special_token_splitter]") {
  const auto splitter = bert_splitter();
  CHECK(segments(splitter, "hello [world]").size() == 1);
  CHECK(segments(splitter, "hello [world]")[0] == Segment{"hello [world]", -1});
  CHECK(segments(splitter, "").empty());
}

TEST_CASE("special tokens are cut out with their ids", "[special_token_splitter]") {
  const auto splitter = bert_splitter();
  CHECK(segments(splitter, "[CLS] a [SEP]") == std::vector<Segment>{{"[CLS]", 101}, {" a ", -1}, {"[SEP]", 102}});
  CHECK(segments(splitter, "x[SEP]y[MASK][MASK]") ==
        std::vector<Segment>{{"x", -1}, {"[SEP]", 102}, {"y", -1}, {"[MASK]", 103}, {"[MASK]", 103}});
  // Matching is case-sensitive and exact.
  CHECK(segments(splitter, "[cls] [CLS [[CLS]]") ==
        std::vector<Segment>{{"[cls] [CLS [", -1}, {"[CLS]", 101}, {"]", -1}});
}

TEST_CASE("the longest special token starting at a position wins", "[special_token_splitter]") {
  const mtbert::SpecialTokenSplitter splitter({{"<s>", 1}, {"<s>x", 2}, {"", 7}});
  CHECK(segments(splitter, "a<s>xb<s>") == std::vector<Segment>{{"a", -1}, {"<s>x", 2}, {"b", -1}, {"<s>", 1}});
  CHECK(splitter.tokens().size() == 2);  // the empty text was ignored
}
