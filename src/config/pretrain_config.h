#pragma once
// A masked-language-model pretraining config (`mtbert pretrain`): the same
// machinery as an experiment's (extends, overlays, key=value overrides,
// ${VAR}, one-line errors naming file, line and key, a resolved YAML), with
// a corpus and masking instead of tasks. experiments/pretrain/base.yaml
// documents every key.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment_config.h"

namespace mtbert {

struct CorpusConfig {
  // Plain text: a sentence or paragraph per line, a blank line between documents.
  std::vector<std::string> files;
  // Tasks whose training sentences join the corpus: tasks of `experiment` (an
  // experiment file, relative to the folder mtbert runs in), by name.
  std::string experiment;
  std::vector<std::string> tasks;
  int64_t max_length = 128;       // tokens per segment, [CLS] and [SEP] included
  double holdout_fraction = 0.01;  // segments held out for evaluation
  // Token caches (data/mlm_corpus.h); empty: the run folder's cache/.
  std::string cache_dir;
};

struct MaskingConfig {
  double mask_prob = 0.15;
  double mask_token_fraction = 0.8;    // of the chosen: [MASK]
  double random_token_fraction = 0.1;  // of the chosen: a random token (the rest stay)
  bool whole_word = false;
};

struct PretrainTrainSection {
  int64_t max_steps = 1000;  // optimizer steps
  int64_t batch_size = 32;
  double lr = 5e-4;
  double weight_decay = 0.01;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.98;
  double adam_eps = 1e-6;
  double grad_clip = 1.0;
  int64_t grad_accumulation = 1;
  ScheduleConfig schedule{ScheduleKind::linear, 0, 100, 0.0};
  int64_t eval_every_steps = 200;
  int64_t eval_segments = 512;  // held-out segments per evaluation (0: all)
};

struct PretrainConfig {
  std::string name;
  std::filesystem::path source;
  uint64_t seed = 11711;
  int64_t threads = 0;
  DeviceChoice device = DeviceChoice::cpu;
  Precision precision = Precision::fp32;
  std::string output_dir;  // default: runs/<name>
  std::vector<std::string> tags;
  ModelSection model;  // pals and freeze_encoder do not apply
  CorpusConfig corpus;
  MaskingConfig masking;
  PretrainTrainSection train;
  DistributedSection distributed;  // as an experiment's (docs/data-parallel.md)
};

template <class V>
void describe(V& v, CorpusConfig& c) {
  v.key("files", c.files, Doc{"plain-text files: a sentence or paragraph per line, a blank line between documents"});
  v.key("experiment", c.experiment,
        Doc{"an experiment file whose tasks' training sentences join the corpus (with `tasks`)"});
  v.key("tasks", c.tasks, Doc{"names of that experiment's tasks, e.g. [sst, para, sts]"});
  v.key("max_length", c.max_length, Range{3, limits::kPositions, "[CLS], a token, [SEP]"},
        Doc{"tokens per segment, [CLS] and [SEP] included; a segment packs consecutive lines of one document"});
  v.key("holdout_fraction", c.holdout_fraction, Fraction{false}, Doc{"segments held out for evaluation (every k-th)"});
  v.key("cache_dir", c.cache_dir,
        Doc{"where the token caches live (one per corpus, tokenizer and max_length, reused while they are "
            "unchanged); name a shared folder to tokenize a corpus once for several runs",
            "the run folder's cache/"});
}

template <class V>
void describe(V& v, MaskingConfig& m) {
  v.key("mask_prob", m.mask_prob, Fraction{false}, Doc{"the chance that a token (or word) is chosen"});
  v.key("mask_token_fraction", m.mask_token_fraction, Fraction{true}, Doc{"of the chosen: replaced by [MASK]"});
  v.key("random_token_fraction", m.random_token_fraction, Fraction{true},
        Doc{"of the chosen: a random token (the rest stay as they are)"});
  v.key("whole_word", m.whole_word,
        Doc{"choose whole words (WordPiece ## continuations, SentencePiece word starts) together"});
}

template <class V>
void describe(V& v, PretrainTrainSection& t) {
  v.key("max_steps", t.max_steps, Range{1, limits::kSteps}, Doc{"optimizer steps"});
  v.key("batch_size", t.batch_size, Range{1, limits::kBatchSize},
        Doc{"segments per batch (per rank, when data-parallel)"});
  v.key("lr", t.lr, Positive{}, Doc{"peak learning rate"});
  v.key("weight_decay", t.weight_decay, NonNegative{},
        Doc{"AdamW's decoupled weight decay (not on biases and LayerNorm weights)"});
  v.key("adam_beta1", t.adam_beta1, Fraction{false}, Doc{"AdamW's beta1"});
  v.key("adam_beta2", t.adam_beta2, Fraction{false}, Doc{"AdamW's beta2"});
  v.key("adam_eps", t.adam_eps, Positive{}, Doc{"AdamW's epsilon"});
  v.key("grad_clip", t.grad_clip, NonNegative{}, Doc{"clip the global gradient L2 norm to this; 0: off"});
  v.key("grad_accumulation", t.grad_accumulation, Range{1, limits::kBatchSize}, Doc{"batches per optimizer step"});
  v.section("schedule", t.schedule);
  v.key("eval_every_steps", t.eval_every_steps, Range{1, limits::kSteps},
        Doc{"held-out evaluation and a checkpoint every N steps"});
  v.key("eval_segments", t.eval_segments, AtLeast{0}, Doc{"held-out segments per evaluation; 0: all"});
}

template <class V>
void describe(V& v, PretrainConfig& c) {
  describe_run_keys(v, c);
  v.section("model", c.model);
  v.section("corpus", c.corpus);
  v.section("masking", c.masking);
  v.section("train", c.train);
  v.section("distributed", c.distributed);
}

PretrainConfig load_pretrain_config(const std::filesystem::path& path, const std::vector<std::string>& overrides = {},
                                    const std::vector<std::filesystem::path>& overlays = {});
std::string resolved_yaml(const PretrainConfig& config);
std::vector<std::string> pretrain_keys();

// The first file a new pretraining run reads that does not exist, as "key:
// path" (relative paths from the current folder): the model section's files
// (config/model_inputs.h), corpus.files, then corpus.experiment and the
// training file of each of corpus.tasks in it; none when all do.
std::optional<std::string> first_missing_input(const PretrainConfig& config);

// The optimizer settings of an experiment's train section, for make_optimizer.
TrainSection optimizer_settings(const PretrainTrainSection& train);

}  // namespace mtbert
