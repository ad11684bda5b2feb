#pragma once
// Suggestions for misspelled names: the closest candidate by edit distance
// (optimal string alignment: insertions, deletions, substitutions and swaps
// of neighbours each cost 1), ignoring case.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mtbert {

size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate when it is close enough to be a likely typo: at most
// 1 + len/4 edits away (len the candidate's length), the first one on a tie.
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean \"x\"?)" or "".
std::string did_you_mean_suffix(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace mtbert
