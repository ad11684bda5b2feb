#pragma once
// Small learnable data sets in the CS224N file layouts, written into a temp
// folder, and an ExperimentConfig training a tiny random encoder on them with
// the fixtures' WordPiece vocabulary. For trainer tests that must run in
// seconds and still show learning.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "config/experiment_config.h"
#include "support/test_support.h"

namespace mtbert::test {

inline std::string pick(std::mt19937& rng, const std::vector<std::string>& words) {
  return words[std::uniform_int_distribution<size_t>(0, words.size() - 1)(rng)];
}

inline std::string filler(std::mt19937& rng, int n) {
  static const std::vector<std::string> words = {"the", "movie", "film", "story", "plot", "was", "is", "it",
                                                 "this", "acting", "music", "scene", "and", "very", "really"};
  std::string s;
  for (int i = 0; i < n; ++i) s += (s.empty() ? "" : " ") + pick(rng, words);
  return s;
}

// cfimdb-like: the label is whether the sentence holds a positive word.
// para-like: a pair is a duplicate when both sentences hold the same key word.
// sts-like: similarity 5 when the key words agree, 0 otherwise (plus filler).
inline void write_synthetic_tasks(const std::filesystem::path& dir, int train_rows, int dev_rows, unsigned seed) {
  std::mt19937 rng(seed);
  const std::vector<std::string> positive = {"good", "great", "best", "fun", "love", "enjoy"};
  const std::vector<std::string> negative = {"bad", "worst", "boring", "hate"};
  const std::vector<std::string> keys = {"actor", "music", "plot", "scene", "story", "character"};
  auto sentence_with = [&](const std::string& word) {
    const int before = std::uniform_int_distribution<int>(1, 4)(rng), after = std::uniform_int_distribution<int>(0, 3)(rng);
    return filler(rng, before) + " " + word + (after ? " " + filler(rng, after) : "");
  };
  for (const std::string split : {"train", "dev"}) {
    const int rows = split == "train" ? train_rows : dev_rows;
    std::ofstream sentiment(dir / ("cfimdb-" + split + ".csv"));
    std::ofstream para(dir / ("para-" + split + ".csv"));
    std::ofstream sts(dir / ("sts-" + split + ".csv"));
    sentiment << "\tid\tsentence\tsentiment\n";
    para << "\tid\tsentence1\tsentence2\tis_duplicate\n";
    sts << "\tid\tsentence1\tsentence2\tsimilarity\n";
    for (int i = 0; i < rows; ++i) {
      const bool good = rng() % 2 == 0;
      sentiment << i << "\t" << split << "s" << i << "\t" << sentence_with(pick(rng, good ? positive : negative))
                << "\t" << (good ? 1 : 0) << "\n";
      const std::string k1 = pick(rng, keys);
      const bool same = rng() % 2 == 0;
      std::string k2 = k1;
      while (!same && k2 == k1) k2 = pick(rng, keys);
      para << i << "\t" << split << "p" << i << "\t" << sentence_with(k1) << "\t" << sentence_with(k2) << "\t"
           << (same ? "1.0" : "0.0") << "\n";
      sts << i << "\t" << split << "t" << i << "\t" << sentence_with(k1) << "\t" << sentence_with(k2) << "\t"
          << (same ? "5.0" : "0.0") << "\n";
    }
  }
}

// A tiny random encoder on the three synthetic tasks.
inline ExperimentConfig synthetic_experiment(const std::filesystem::path& data, const std::filesystem::path& out) {
  ExperimentConfig c;
  c.name = "synthetic";
  c.source = "synthetic.yaml";
  c.seed = 7;
  c.threads = 1;
  c.output_dir = out.string();
  c.model.tokenizer.kind = TokenizerKind::wordpiece;
  c.model.tokenizer.vocab = (fixtures_dir() / "models" / "bert-legacy" / "vocab.txt").string();
  c.model.config = {{"hidden_size", 32},          {"num_hidden_layers", 1},
                    {"num_attention_heads", 2},    {"intermediate_size", 48},
                    {"max_position_embeddings", 32}, {"hidden_dropout_prob", 0.0},
                    {"attention_probs_dropout_prob", 0.0}};
  for (const std::string name : {"cfimdb", "para", "sts"}) {
    TaskConfig t;
    t.name = name;
    t.train = (data / (name + "-train.csv")).string();
    t.dev = (data / (name + "-dev.csv")).string();
    t.dropout = 0.0;
    t.max_length = 32;
    c.tasks.push_back(t);
  }
  c.train.epochs = 2;
  c.train.batch_size = 16;
  c.train.eval_batch_size = 64;
  c.train.lr = 3e-3;
  c.train.sampler.kind = SamplerKind::round_robin;
  return c;
}

}  // namespace mtbert::test
