#pragma once
// A training experiment as the researcher writes it in YAML (see
// experiments/base.yaml for every key with its default and meaning).
//
// Loading: `extends:` (a path relative to the file, or a list, merged
// depth-first: the extending file wins), then overlay files (merged over the
// result in order, as an extending file would be: how a sweep reuses the real
// experiments with a smoke-test model), then `key.path=value` overrides from
// the command line (values parsed as YAML scalars or flow collections), then
// `${VAR}` / `${VAR:-default}` expansion in strings. Validation names the file
// and key path the value came from: an unknown key with a "did you mean"
// suggestion, a wrong type, a value out of range or not among the choices.
//
// The rules in detail (config/yaml_merge.h, config_extends.h, config_overrides.h,
// env_expansion.h):
// - maps merge key by key; scalars and lists replace; `key: null` (or an
//   empty value) deletes the key: its default comes back, or an inherited task
//   is dropped;
// - `name` and `output_dir` are never inherited through `extends:`: `name`
//   defaults to the loaded file's stem, `output_dir` to runs/<name>;
// - `$$` is a literal `$` (resolved_yaml writes every `$` so);
// - every task needs `train`; a task's name is a built-in task or it has a
//   `type:`;
// - PCGrad (train.pcgrad.enabled) needs train.sampler.kind: mixed, and an
//   encoder that is not frozen; early stopping needs a task with `dev`;
// - paths are kept as written (relative to the working directory), and files
//   need not exist yet: the readers check them and name them.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_overrides.h"

namespace mtbert {

struct TokenizerConfig {
  // "auto": the pretrained model folder's tokenizer; "wordpiece" with `vocab`;
  // "sentencepiece" with `model`, or trained from `train_from` when `model`
  // does not exist yet (random-init models).
  std::string kind = "auto";
  std::string vocab;                    // vocab.txt (wordpiece)
  bool lower_case = true;               // wordpiece
  std::string model;                    // spm.model (sentencepiece)
  std::vector<std::string> train_from;  // text files, or "tasks" for the tasks' training texts
  int64_t vocab_size = 8000;            // when training
};

// Projected Attention Layers (models/pal_config.h): none | parallel (beside
// every encoder layer) | top (one low-rank block on top), per task.
struct PalsSection {
  std::string kind = "none";
  int64_t rank = 204;
  int64_t heads = 6;
};

struct ModelSection {
  // A converted model folder; empty: a randomly initialized encoder built from
  // `config`.
  std::string pretrained;
  // HuggingFace config.json keys applied on top of the pretrained config (or
  // of the defaults, for a random encoder): e.g. hidden_dropout_prob, and for
  // later issues the disentangled-attention keys. Kept as JSON so that new
  // ModelConfig keys need no change here; ModelConfig validates them.
  nlohmann::json config = nlohmann::json::object();
  bool freeze_encoder = false;
  PalsSection pals;
  TokenizerConfig tokenizer;
};

struct SmartConfig {
  bool enabled = false;
  double weight = 1.0;          // lambda_s
  int64_t steps = 1;            // K ascent steps
  double step_size = 1e-3;      // eta
  double epsilon = 1e-6;        // see train/smart.h for how it acts
  double noise_std = 1e-5;      // sigma
  // > 0: after each step, project delta onto the l_inf ball of this radius
  // (the paper's projection); 0: off, as in the public implementations.
  double radius = 0.0;
  // Bregman proximal point with a momentum (EMA) teacher.
  bool bregman = false;
  double bregman_weight = 1.0;  // mu
  double momentum = 0.99;       // beta
};

struct SiftConfig {
  bool enabled = false;
  double weight = 1.0;
  double step_size = 1e-3;
  double noise_std = 1e-5;
};

struct TaskConfig {
  std::string name;    // key in `tasks:`; a built-in task name, or any name with `type:`
  std::string type;    // built-in task whose spec this uses; default: the name
  std::string train;   // paths; empty: no such split
  std::string dev;
  std::string test;
  int64_t limit_train = 0;  // first N rows only (0: all)
  int64_t limit_dev = 0;
  int64_t limit_test = 0;
  std::string subset = "first";  // how limit_* choose rows: first | random (seeded by `seed`)
  double loss_weight = 1.0;
  std::string pooling = "cls";       // cls | mean | pooler
  std::string pair_mode = "cross";   // siamese | cross (pair tasks)
  std::string combine = "concat";    // concat | cosine (siamese)
  double dropout = 0.1;
  int64_t max_length = 128;
  SmartConfig smart;
  SiftConfig sift;
};

struct ScheduleConfig {
  std::string kind = "constant";  // constant | linear | cosine
  double warmup_epochs = 0;       // warmup length, in epochs ...
  int64_t warmup_steps = 0;       // ... or in steps (whichever is given)
  double final_lr = 0.0;          // linear/cosine decay to this floor
};

struct SamplerConfig {
  // sequential | round_robin | proportional | annealed | temperature | mixed
  std::string kind = "proportional";
  double temperature = 2.0;     // temperature sampling: p ~ N^(1/T)
  double anneal_min = 0.2;      // annealed: alpha = 1 - (1 - anneal_min) (e-1)/(E-1)
  int64_t steps_per_epoch = 0;  // 0: the sum of the tasks' batches per pass
};

struct PcgradConfig {
  bool enabled = false;
  std::string reduction = "sum";  // sum | mean of the projected task gradients
};

struct TrainSection {
  int64_t epochs = 10;    // with max_steps > 0, 0 means: as many as max_steps takes
  int64_t max_steps = 0;  // >0: stop after this many optimizer steps (or at the end of `epochs`)
  int64_t batch_size = 16;
  int64_t eval_batch_size = 64;
  double lr = 1e-5;
  double head_lr = 0;     // 0: same as lr
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_eps = 1e-8;
  double grad_clip = 1.0;  // max global L2 norm; 0: off
  int64_t grad_accumulation = 1;
  ScheduleConfig schedule;
  SamplerConfig sampler;
  PcgradConfig pcgrad;
  bool bucket_by_length = true;
  int64_t eval_every_steps = 0;  // 0: at the end of each epoch
  int64_t early_stopping_patience = 0;  // evaluations without improvement; 0: off
  std::string on_bad_row = "error";     // error | skip
};

struct ExperimentConfig {
  std::string name;
  std::filesystem::path source;  // the YAML file it was read from
  uint64_t seed = 11711;
  int64_t threads = 0;           // 0: one per core
  std::string device = "cpu";    // cpu | cuda | auto
  std::string precision = "fp32";  // fp32 | bf16 (autocast, core/autocast_scope.h)
  std::string output_dir;        // default: runs/<name>
  // Labels recorded in the run's summary.json, e.g. [smoke] for runs that are
  // not the papers' setting (mtbert report prints a banner for them).
  std::vector<std::string> tags;
  ModelSection model;
  std::vector<TaskConfig> tasks;  // in file order
  TrainSection train;
};

// Reads, merges, overrides, expands and validates. Throws UserError naming the
// file and key path of the problem.
ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<std::string>& overrides = {},
                                 const std::vector<std::filesystem::path>& overlays = {});
// The same with overrides that remember where they were written (a sweep file).
ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
                                 const std::vector<std::filesystem::path>& overlays);

// The fully resolved YAML (every key, defaults included), as written to a run
// folder's config.resolved.yaml; load_experiment of it gives the same config.
std::string resolved_yaml(const ExperimentConfig& config);

}  // namespace mtbert
