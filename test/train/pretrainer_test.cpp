// Masked-language-model pretraining: masking statistics on a fixed seed, the
// token cache, a tiny model learning a corpus with deterministic structure,
// an interrupted run resuming to identical weights, the tied decoder, and
// the model folder it writes.
#include "train/pretrainer.h"

#include <fstream>
#include <set>

#include <torch/torch.h>

#include "core/safetensors.h"
#include "data/mlm_masking.h"
#include "models/pretrained_model.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/run_directory.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

fs::path fixture_vocab() { return test::fixtures_dir() / "models" / "bert-legacy" / "vocab.txt"; }

// Lines of 8 words in a fixed cycle of 12: each word is determined by the one
// before it, so a masked word can be read off its neighbours. Documents of 6
// lines, a blank line between them.
void write_cyclic_corpus(const fs::path& path, int documents) {
  const std::vector<std::string> cycle = {"the", "movie", "was", "very", "good", "and", "the",
                                          "music", "is", "really", "fun", "too"};
  std::ofstream out(path);
  for (int d = 0; d < documents; ++d) {
    for (int line = 0; line < 6; ++line) {
      const int start = (d * 5 + line * 7) % static_cast<int>(cycle.size());
      for (int w = 0; w < 8; ++w) out << (w ? " " : "") << cycle[(start + w) % cycle.size()];
      out << "\n";
    }
    out << "\n";
  }
}

PretrainConfig tiny_config(const fs::path& dir, int64_t max_steps) {
  PretrainConfig c;
  c.name = "tiny";
  c.source = "tiny.yaml";
  c.seed = 5;
  c.threads = 1;
  c.model.tokenizer.kind = TokenizerKind::wordpiece;
  c.model.tokenizer.vocab = fixture_vocab().string();
  c.model.config = {{"hidden_size", 32},          {"num_hidden_layers", 2},         {"num_attention_heads", 2},
                    {"intermediate_size", 64},    {"max_position_embeddings", 64}, {"hidden_dropout_prob", 0.0},
                    {"attention_probs_dropout_prob", 0.0}};
  c.corpus.files = {(dir / "corpus.txt").string()};
  c.corpus.max_length = 32;
  c.corpus.holdout_fraction = 0.1;
  c.corpus.cache_dir = (dir / "cache").string();
  c.train.max_steps = max_steps;
  c.train.batch_size = 16;
  c.train.lr = 3e-3;
  c.train.schedule.warmup_steps = 20;
  c.train.eval_every_steps = 25;
  c.train.eval_segments = 0;
  return c;
}

struct Finished {
  nlohmann::json summary;
  NamedTensors weights;
};

// Pretrains into `out`; with stop_at > 0 stops there (as SIGINT would) and
// resumes from the run folder alone.
Finished pretrain(const PretrainConfig& config, const fs::path& out, int64_t stop_at = 0) {
  RunDirectory run(out);
  run.create();
  TrainerHooks hooks;
  hooks.show_progress = false;
  {
    Pretraining p = start_pretraining(config, run);
    Pretrainer trainer(p, run);
    if (stop_at > 0) hooks.stop_requested = [&] { return trainer.progress().global_step >= stop_at; };
    const TrainEnd end = trainer.train(hooks);
    trainer.finish(end, "test");
    if (stop_at == 0)
      return {run.read_summary(), read_safetensors(out / "model" / "model.safetensors").tensors};
    REQUIRE(end == TrainEnd::interrupted);
  }
  Pretraining p = reopen_pretraining(run);
  Pretrainer trainer(p, run);
  trainer.restore_last_checkpoint();
  hooks.stop_requested = nullptr;
  REQUIRE(trainer.train(hooks) == TrainEnd::finished);
  trainer.finish(TrainEnd::finished, "test");
  return {run.read_summary(), read_safetensors(out / "model" / "model.safetensors").tensors};
}

}  // namespace

TEST_CASE("masking: 15% chosen, 80/10/10, specials never, whole words together", "[pretrain][masking]") {
  const auto tokenizer = load_tokenizer(fixture_vocab().parent_path());
  const VocabularyTraits vocabulary = vocabulary_traits(*tokenizer);
  CHECK(vocabulary.special[static_cast<size_t>(vocabulary.ids.cls)]);
  CHECK(vocabulary.continues_word[static_cast<size_t>(tokenizer->piece_to_id("##ing"))]);
  CHECK(!vocabulary.continues_word[static_cast<size_t>(tokenizer->piece_to_id("movie"))]);

  // 400 segments of 60 ids: real words and ## continuations, some specials.
  std::vector<std::vector<int64_t>> segments;
  std::mt19937 rng(3);
  const int64_t first_word = tokenizer->piece_to_id("the"), ing = tokenizer->piece_to_id("##ing");
  for (int s = 0; s < 400; ++s) {
    std::vector<int64_t> ids;
    for (int i = 0; i < 60; ++i) ids.push_back(i % 3 == 2 ? ing : first_word + static_cast<int64_t>(rng() % 50));
    ids[10] = vocabulary.ids.unk;  // special: never chosen
    segments.push_back(ids);
  }
  torch::manual_seed(11);
  MaskingOptions options;
  const MaskedBatch batch = mask_segments(segments, vocabulary, options);
  const double candidates = 400.0 * 59;
  const double chosen = static_cast<double>(batch.positions.size(0));
  CHECK(chosen / candidates == Approx(0.15).margin(0.005));
  const auto* input = batch.inputs.input_ids.data_ptr<int64_t>();
  const auto* positions = batch.positions.data_ptr<int64_t>();
  const auto* labels = batch.labels.data_ptr<int64_t>();
  int64_t as_mask = 0, unchanged = 0;
  const int64_t width = batch.inputs.input_ids.size(1);
  for (int64_t m = 0; m < batch.positions.size(0); ++m) {
    const int64_t k = positions[m], column = k % width;
    CHECK(column != 0);          // [CLS]
    CHECK(column != 11);         // the [UNK] at ids[10]
    CHECK(column <= 60);         // [SEP] is at 61
    as_mask += input[k] == vocabulary.ids.mask;
    unchanged += input[k] == labels[m];
  }
  CHECK(as_mask / chosen == Approx(0.8).margin(0.02));
  // Unchanged: the 10% kept, and the random draws that hit the same id.
  CHECK(unchanged / chosen == Approx(0.1).margin(0.02));

  // Whole words: a ##ing is chosen exactly when the word before it is.
  options.whole_word = true;
  torch::manual_seed(12);
  const MaskedBatch words = mask_segments(segments, vocabulary, options);
  std::set<int64_t> picked(words.positions.data_ptr<int64_t>(),
                           words.positions.data_ptr<int64_t>() + words.positions.size(0));
  for (int64_t b = 0; b < 400; ++b)
    for (int64_t i = 1; i <= 60; ++i)
      if (segments[static_cast<size_t>(b)][static_cast<size_t>(i - 1)] == ing && i > 1) {
        const int64_t k = b * width + i;
        CHECK(picked.count(k) == picked.count(k - 1));
      }
  // Words are chosen at 15%: 2 of every 3 tokens start a word here.
  CHECK(static_cast<double>(picked.size()) / candidates == Approx(0.15).margin(0.01));
}

TEST_CASE("masked_rows: a rank's rows of a batch masked whole, trimmed to their longest", "[pretrain][masking]") {
  const auto tokenizer = load_tokenizer(fixture_vocab().parent_path());
  const VocabularyTraits vocabulary = vocabulary_traits(*tokenizer);
  const int64_t first_word = tokenizer->piece_to_id("the");
  // Rows of 9, 3, 5 and 2 ids: the first is the longest of all, the last two's
  // longest is 5 + [CLS] + [SEP].
  std::vector<std::vector<int64_t>> segments;
  for (const int length : {9, 3, 5, 2}) {
    std::vector<int64_t> ids;
    for (int i = 0; i < length; ++i) ids.push_back(first_word + i);
    segments.push_back(ids);
  }
  MaskingOptions options;
  options.mask_prob = 0.5;
  const MaskedBatch whole = mask_segments(segments, vocabulary, options, at::detail::createCPUGenerator(5));
  const int64_t width = whole.inputs.input_ids.size(1);
  REQUIRE(width == 11);

  const MaskedBatch tail = masked_rows(whole, 2, 4);
  CHECK(tail.inputs.input_ids.sizes() == torch::IntArrayRef({2, 7}));
  CHECK(torch::equal(tail.inputs.input_ids, whole.inputs.input_ids.slice(0, 2, 4).slice(1, 0, 7)));
  CHECK(torch::equal(tail.inputs.attention_mask, whole.inputs.attention_mask.slice(0, 2, 4).slice(1, 0, 7)));
  // Every chosen position of the whole batch is in exactly one share, with
  // its label, pointing at the same token.
  const MaskedBatch head = masked_rows(whole, 0, 2);
  CHECK(head.labels.size(0) + tail.labels.size(0) == whole.labels.size(0));
  CHECK(torch::equal(torch::cat({head.labels, tail.labels}), whole.labels));
  for (const auto& [share, first_row] : {std::pair<const MaskedBatch*, int64_t>{&head, 0}, {&tail, 2}}) {
    const int64_t share_width = share->inputs.input_ids.size(1);
    for (int64_t m = 0; m < share->positions.size(0); ++m) {
      const int64_t k = share->positions[m].item<int64_t>();
      const int64_t original = (k / share_width + first_row) * width + k % share_width;
      CHECK(share->inputs.input_ids.view(-1)[k].item<int64_t>() == whole.inputs.input_ids.view(-1)[original].item<int64_t>());
    }
  }
  CHECK(masked_rows(whole, 4, 4).labels.size(0) == 0);

  // Whether a share is padded (its attention then takes the mask): from the
  // rows' lengths, the same as reading the mask.
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 4}, {0, 1}, {1, 2}, {2, 4}, {0, 2}}) {
    const MaskedBatch share = begin == 0 && end == 4 ? whole : masked_rows(whole, begin, end);
    CHECK(share.inputs.padded == share.inputs.attention_mask.eq(0).any().item<bool>());
  }
  CHECK_FALSE(masked_rows(whole, 1, 2).inputs.padded);
  CHECK(whole.inputs.padded);
  std::vector<std::vector<int64_t>> equal(2, std::vector<int64_t>{first_word, first_word + 1});
  CHECK_FALSE(mask_segments(equal, vocabulary, options).inputs.padded);
}

TEST_CASE("a tiny encoder learns a corpus with deterministic structure", "[pretrain]") {
  const test::TempDir dir;
  write_cyclic_corpus(dir.path() / "corpus.txt", 120);
  PretrainConfig config = tiny_config(dir.path(), 1500);  // about 2 s
  config.train.eval_every_steps = 500;
  const Finished run = pretrain(config, dir.path() / "run");
  INFO(run.summary.dump(2));
  CHECK(run.summary["status"] == "finished");
  CHECK(run.summary["last"]["dev"]["mlm"]["accuracy"].get<double>() > 0.9);
  // No decoder tensor of its own: the head projects onto the word embeddings.
  CHECK(run.weights.count("cls.predictions.transform.dense.weight") == 1);
  CHECK(run.weights.count("cls.predictions.bias") == 1);
  CHECK(run.weights.count("cls.predictions.decoder.weight") == 0);

  // The model folder loads as a pretrained encoder with its head.
  const PretrainedModel folder = load_pretrained(dir.path() / "run" / "model");
  CHECK(folder.mlm_head.size() == 5);
  MaskedLm model = masked_lm_of(folder);
  CHECK(model->predictions->parameters().size() == 5);  // dense w/b, LayerNorm w/b, bias
  // Tied: the logits move with the word embedding table.
  TokenBatch batch{torch::tensor({{2, 40, 4, 3}}), torch::ones({1, 4}, torch::kLong), torch::zeros({1, 4}, torch::kLong)};
  torch::NoGradGuard no_grad;
  const auto before = model->logits_at(batch, torch::tensor({2}));
  model->bert->embeddings->word_embeddings->weight[7].add_(1.0);
  const auto after = model->logits_at(batch, torch::tensor({2}));
  CHECK((after - before).abs()[0][7].item<double>() > 1e-3);
}

TEST_CASE("an interrupted pretraining run resumes to identical weights", "[pretrain][resume]") {
  const test::TempDir dir;
  write_cyclic_corpus(dir.path() / "corpus.txt", 40);
  PretrainConfig config = tiny_config(dir.path(), 40);
  config.train.grad_accumulation = 2;
  config.train.eval_every_steps = 10;
  const Finished whole = pretrain(config, dir.path() / "whole");
  const Finished resumed = pretrain(config, dir.path() / "resumed", /*stop_at=*/13);
  REQUIRE(whole.weights.size() == resumed.weights.size());
  for (const auto& [name, tensor] : whole.weights) {
    INFO(name);
    CHECK(torch::equal(tensor, resumed.weights.at(name)));
  }
  CHECK(whole.summary["last"]["dev"] == resumed.summary["last"]["dev"]);
}

TEST_CASE("the token cache is reused while the corpus is unchanged, rebuilt when it changes", "[pretrain]") {
  const test::TempDir dir;
  write_cyclic_corpus(dir.path() / "corpus.txt", 10);
  const auto tokenizer = load_tokenizer(fixture_vocab().parent_path());
  const std::vector<CorpusSource> sources = {{dir.path() / "corpus.txt", ""}};
  const auto first = TokenCache::open_or_build(dir.path() / "cache", sources, *tokenizer, {fixture_vocab()}, 32);
  // 10 documents of 6 lines x 8 words, 30 tokens per segment: 3 lines per segment.
  CHECK(first.segments() == 20);
  CHECK(first.tokens() == 10 * 6 * 8);
  int64_t length = 0;
  const uint32_t* ids = first.segment(0, &length);
  CHECK(length == 24);
  CHECK(tokenizer->id_to_piece(ids[0]) == "the");
  const auto again = TokenCache::open_or_build(dir.path() / "cache", sources, *tokenizer, {fixture_vocab()}, 32);
  CHECK(again.folder() == first.folder());
  const auto longer = TokenCache::open_or_build(dir.path() / "cache", sources, *tokenizer, {fixture_vocab()}, 64);
  CHECK(longer.folder() != first.folder());
  CHECK(longer.segments() == 10);  // a document's 48 tokens fit in one segment
}
