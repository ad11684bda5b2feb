#pragma once
// A small deterministic corpus of made-up words for training throwaway
// SentencePiece models in tests, so that they need no data files.
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/catch.h"

#include "text/sentencepiece_engine.h"

namespace mtbert::test {

inline std::vector<std::string> sentencepiece_test_corpus(int lines = 300) {
  // A few hundred distinct words built from syllables, so that vocabularies
  // of a couple hundred pieces can be learned.
  static const char* const kSyllables[] = {"ka",  "ri", "to",  "mo",  "ne",  "su", "la", "pe",  "di", "go", "ba",
                                           "chi", "zu", "fen", "tor", "mil", "an", "es", "ing", "ed", "the"};
  constexpr std::size_t kSyllableCount = sizeof(kSyllables) / sizeof(kSyllables[0]);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::size_t> syllable(0, kSyllableCount - 1);
  std::uniform_int_distribution<int> syllables_per_word(1, 4);
  std::vector<std::string> words(400);
  for (std::string& word : words) {
    for (int n = syllables_per_word(rng); n > 0; --n) word += kSyllables[syllable(rng)];
  }
  std::uniform_int_distribution<int> length(4, 14);
  std::uniform_int_distribution<std::size_t> word(0, words.size() - 1);
  std::vector<std::string> corpus;
  for (int i = 0; i < lines; ++i) {
    std::string line;
    for (int n = length(rng); n > 0; --n) line += (line.empty() ? "" : " ") + words[word(rng)];
    corpus.push_back(line);
  }
  return corpus;
}

inline std::string joined_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// SentencePiece's own view of a model file, through the plugin.
inline std::unique_ptr<SentencePieceEngine> load_engine(const std::filesystem::path& model) {
  std::string error;
  auto engine = sentencepiece_api().load(model.string(), &error);
  INFO(error);
  REQUIRE(engine);
  return engine;
}

}  // namespace mtbert::test
