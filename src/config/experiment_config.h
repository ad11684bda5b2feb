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
// env_expansion.h; the keys and their single-value checks: describe() below):
// - maps merge key by key; scalars and lists replace; `key: null` (or an
//   empty value) deletes the key: its default comes back, or an inherited task
//   is dropped;
// - `name` and `output_dir` are never inherited through `extends:`: `name`
//   defaults to the loaded file's stem, `output_dir` to runs/<name>;
// - `$$` is a literal `$` (resolved_yaml writes every `$` so);
// - every task needs `train`; a task's name is a built-in task or it has a
//   `type:`;
// - `task_defaults:` holds task keys (not type, train, dev, test) that every
//   task inherits unless it sets its own; config.resolved.yaml writes each
//   task with what it inherited, and no task_defaults;
// - PCGrad (train.pcgrad.enabled) needs train.sampler.kind: mixed, and an
//   encoder that is not frozen; early stopping needs a task with `dev`;
// - paths are kept as written (relative to the working directory), and files
//   need not exist yet: the readers check them and name them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_overrides.h"
#include "config/config_reader.h"
#include "config/enum_names.h"
#include "core/limits.h"
#include "data/task_data.h"
#include "models/head_spec.h"
#include "models/pal_config.h"

namespace mtbert {

// ---------------------------------------------------------------------------
// The choices of the config, as enums (their YAML names at the end).

enum class DeviceChoice { cpu, cuda, automatic };
enum class Precision { fp32, bf16 };
enum class TokenizerKind { automatic, wordpiece, sentencepiece };
enum class Subset { first, random };
enum class ScheduleKind { constant, linear, cosine };
enum class SamplerKind { sequential, round_robin, proportional, annealed, temperature, mixed };
enum class PcgradReduction { sum, mean };
enum class DistributedBackend { automatic, gloo, nccl };

// ---------------------------------------------------------------------------
// The sections. Each lists its keys once, in describe() below: reading,
// validation of single values, config.resolved.yaml and the schema test all
// go through it. Defaults are the members' initializers.

struct TokenizerConfig {
  // automatic ("auto"): the pretrained model folder's tokenizer; wordpiece
  // with `vocab`; sentencepiece with `model`, or trained from `train_from`
  // when `model` does not exist yet (random-init models).
  TokenizerKind kind = TokenizerKind::automatic;
  std::string vocab;                    // vocab.txt (wordpiece)
  bool lower_case = true;               // wordpiece
  std::string model;                    // spm.model (sentencepiece)
  std::vector<std::string> train_from;  // text files, or "tasks" for the tasks' training texts
  int64_t vocab_size = 8000;            // when training
};

struct ModelSection {
  // A converted model folder; empty: a randomly initialized encoder built from
  // `config`.
  std::string pretrained;
  // HuggingFace config.json keys applied on top of the pretrained config (or
  // of the defaults, for a random encoder): e.g. hidden_dropout_prob, and the
  // disentangled-attention keys. Kept as JSON so that new ModelConfig keys
  // need no change here; ModelConfig validates them.
  nlohmann::json config = nlohmann::json::object();
  bool freeze_encoder = false;
  // A fresh pooler (HuggingFace's initialization) for a pretrained checkpoint
  // that has none (mtbert pretrain trains no next-sentence task, so its
  // encoders carry no pooler), for heads with pooling: pooler. Being new, it
  // trains with the heads, also under freeze_encoder.
  bool add_pooler = false;
  PalConfig pals;  // Projected Attention Layers (models/pal_config.h)
  TokenizerConfig tokenizer;
};

// SMART's ascent step (train/smart.h): the paper's projected ascent in an
// l_inf ball, or the public code's renormalized perturbation.
enum class SmartUpdate { projected, normalized };

struct SmartConfig {
  bool enabled = false;
  double weight = 1.0;          // lambda_s
  SmartUpdate update = SmartUpdate::projected;
  int64_t steps = 1;            // K ascent steps
  double step_size = 1e-3;      // eta
  double epsilon = 1e-6;        // the normalizations' guard (train/smart.h)
  double noise_std = 1e-5;      // sigma
  double radius = 1e-5;         // projected: the l_inf ball (the paper's epsilon)
  // Bregman proximal point with a momentum (EMA) teacher.
  bool bregman = false;
  double bregman_weight = 1.0;  // mu
  // beta: `momentum` for the first `late_momentum_after` of the training
  // steps, then `late_momentum` (the paper: 0.99 for the first 10%, then 0.999).
  double momentum = 0.99;
  double late_momentum = 0.999;
  double late_momentum_after = 0.1;
};

// SiFT (DeBERTa's scale-invariant fine-tuning), DeBERTa's defaults: initial
// perturbation 1e-2, step 1e-4; weight 3 as in its smaller models' scripts.
struct SiftConfig {
  bool enabled = false;
  double weight = 3.0;
  double step_size = 1e-4;
  double noise_std = 1e-2;
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
  Subset subset = Subset::first;  // how limit_* choose rows (random: seeded by `seed`)
  // Keep this share of the training rows (after limit_train): a uniform
  // random draw seeded by `seed`, kept in file order. A report's "trims the
  // dataset by 70%" is train_fraction: 0.3.
  double train_fraction = 1.0;
  double loss_weight = 1.0;
  Pooling pooling = Pooling::cls;
  PairMode pair_mode = PairMode::cross;  // pair tasks: siamese | cross
  PairCombine combine = PairCombine::concat;  // siamese pairs
  CosineMap cosine_map = CosineMap::scaled;   // combine: cosine
  bool sentence_projection = false;           // siamese pairs (models/head_spec.h)
  double dropout = 0.1;
  int64_t max_length = 128;
  SmartConfig smart;
  SiftConfig sift;
};

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::constant;
  double warmup_epochs = 0;       // warmup length, in epochs ...
  int64_t warmup_steps = 0;       // ... or in steps (whichever is given)
  double final_lr = 0.0;          // linear/cosine decay to this floor
};

struct SamplerConfig {
  SamplerKind kind = SamplerKind::proportional;
  double temperature = 2.0;     // temperature sampling: p ~ N^(1/T)
  double anneal_min = 0.2;      // annealed: alpha = 1 - (1 - anneal_min) (e-1)/(E-1)
  int64_t steps_per_epoch = 0;  // 0: the sum of the tasks' batches per pass
};

struct PcgradConfig {
  bool enabled = false;
  PcgradReduction reduction = PcgradReduction::sum;  // of the projected task gradients
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
  BadRowPolicy on_bad_row = BadRowPolicy::error;
};

// Data-parallel training (src/dist/): used only when the process is one rank
// of several (torchrun, srun or mtbert train --nproc set the environment).
struct DistributedSection {
  DistributedBackend backend = DistributedBackend::automatic;  // auto: nccl on CUDA, gloo on CPU
  int64_t timeout_seconds = 300;  // a collective waiting longer than this for a rank fails the run
  double bucket_mb = 25;          // gradient all-reduce bucket size (PyTorch DDP's default)
};

struct ExperimentConfig {
  std::string name;
  std::filesystem::path source;  // the YAML file it was read from
  uint64_t seed = 11711;
  int64_t threads = 0;           // 0: one per core
  DeviceChoice device = DeviceChoice::cpu;
  Precision precision = Precision::fp32;  // bf16: autocast (core/autocast_scope.h)
  std::string output_dir;        // default: runs/<name>
  // Labels recorded in the run's summary.json, e.g. [smoke] for runs that are
  // not the papers' setting (mtbert report prints a banner for them).
  std::vector<std::string> tags;
  ModelSection model;
  std::vector<TaskConfig> tasks;  // in file order
  TrainSection train;
  DistributedSection distributed;
};

// ---------------------------------------------------------------------------
// The schema: each section's keys in the order of experiments/base.yaml, with
// the constraints a single value must meet. `v` is a schema visitor
// (config/schema_visitors.h): it reads, writes or lists the keys. Rules that
// relate several keys live in experiment_config.cpp.

// Constraints of single values.
struct AtLeast {
  int64_t min;
  const char* why = nullptr;  // said in the error, e.g. "[CLS], a token, [SEP]"
};
// [min, max]: the upper bounds come from core/limits.h, far above any real
// use (a mistyped or hostile value is refused before anything is allocated).
struct Range {
  int64_t min, max;
  const char* why = nullptr;
};
struct Positive {};     // > 0
struct NonNegative {};  // >= 0
struct Fraction { bool one_allowed; };  // [0, 1) or [0, 1]
struct Words {};        // each item: letters, digits, _ and - (tags: they end up in file names)

template <class V>
void describe(V& v, TokenizerConfig& t) {
  v.key("kind", t.kind);
  v.key("vocab", t.vocab);
  v.key("lower_case", t.lower_case);
  v.key("model", t.model);
  v.key("train_from", t.train_from);
  v.key("vocab_size", t.vocab_size, Range{1, limits::kVocabSize});
}

template <class V>
void describe(V& v, PalConfig& p) {
  v.key("kind", p.kind);
  v.key("rank", p.rank, Range{1, limits::kHiddenSize});
  v.key("heads", p.heads, Range{1, limits::kAttentionHeads});
}

template <class V>
void describe(V& v, ModelSection& m) {
  v.key("pretrained", m.pretrained);
  v.key("config", m.config);
  v.key("freeze_encoder", m.freeze_encoder);
  v.key("add_pooler", m.add_pooler);
  v.section("pals", m.pals);
  v.section("tokenizer", m.tokenizer);
}

template <class V>
void describe(V& v, SmartConfig& s) {
  v.key("enabled", s.enabled);
  v.key("weight", s.weight, NonNegative{});
  v.key("update", s.update);
  v.key("steps", s.steps, Range{1, 1000});
  v.key("step_size", s.step_size, Positive{});
  v.key("epsilon", s.epsilon, Positive{});
  v.key("noise_std", s.noise_std, NonNegative{});
  v.key("radius", s.radius, Positive{});
  v.key("bregman", s.bregman);
  v.key("bregman_weight", s.bregman_weight, NonNegative{});
  v.key("momentum", s.momentum, Fraction{true});
  v.key("late_momentum", s.late_momentum, Fraction{true});
  v.key("late_momentum_after", s.late_momentum_after, Fraction{true});
}

template <class V>
void describe(V& v, SiftConfig& s) {
  v.key("enabled", s.enabled);
  v.key("weight", s.weight, NonNegative{});
  v.key("step_size", s.step_size, Positive{});
  v.key("noise_std", s.noise_std, NonNegative{});
}

template <class V>
void describe(V& v, TaskConfig& t) {
  v.key("type", t.type);
  v.key("train", t.train);
  v.key("dev", t.dev);
  v.key("test", t.test);
  v.key("limit_train", t.limit_train, AtLeast{0});
  v.key("limit_dev", t.limit_dev, AtLeast{0});
  v.key("limit_test", t.limit_test, AtLeast{0});
  v.key("subset", t.subset);
  v.key("train_fraction", t.train_fraction, Fraction{true});
  v.key("loss_weight", t.loss_weight, NonNegative{});
  v.key("pooling", t.pooling);
  v.key("pair_mode", t.pair_mode);
  v.key("combine", t.combine);
  v.key("cosine_map", t.cosine_map);
  v.key("sentence_projection", t.sentence_projection);
  v.key("dropout", t.dropout, Fraction{false});
  v.key("max_length", t.max_length, Range{3, limits::kPositions, "[CLS], a token, [SEP]"});
  v.section("smart", t.smart);
  v.section("sift", t.sift);
}

template <class V>
void describe(V& v, ScheduleConfig& s) {
  v.key("kind", s.kind);
  v.key("warmup_epochs", s.warmup_epochs, NonNegative{});
  v.key("warmup_steps", s.warmup_steps, Range{0, limits::kSteps});
  v.key("final_lr", s.final_lr, NonNegative{});
}

template <class V>
void describe(V& v, SamplerConfig& s) {
  v.key("kind", s.kind);
  v.key("temperature", s.temperature, Positive{});
  v.key("anneal_min", s.anneal_min, Fraction{true});
  v.key("steps_per_epoch", s.steps_per_epoch, Range{0, limits::kStepsPerEpoch});
}

template <class V>
void describe(V& v, PcgradConfig& p) {
  v.key("enabled", p.enabled);
  v.key("reduction", p.reduction);
}

template <class V>
void describe(V& v, TrainSection& t) {
  v.key("epochs", t.epochs, Range{0, limits::kEpochs});
  v.key("max_steps", t.max_steps, Range{0, limits::kSteps});
  v.key("batch_size", t.batch_size, Range{1, limits::kBatchSize});
  v.key("eval_batch_size", t.eval_batch_size, Range{1, limits::kBatchSize});
  v.key("lr", t.lr, Positive{});
  v.key("head_lr", t.head_lr, NonNegative{});
  v.key("weight_decay", t.weight_decay, NonNegative{});
  v.key("adam_beta1", t.adam_beta1, Fraction{false});
  v.key("adam_beta2", t.adam_beta2, Fraction{false});
  v.key("adam_eps", t.adam_eps, Positive{});
  v.key("grad_clip", t.grad_clip, NonNegative{});
  v.key("grad_accumulation", t.grad_accumulation, Range{1, limits::kBatchSize});
  v.section("schedule", t.schedule);
  v.section("sampler", t.sampler);
  v.section("pcgrad", t.pcgrad);
  v.key("bucket_by_length", t.bucket_by_length);
  v.key("eval_every_steps", t.eval_every_steps, Range{0, limits::kSteps});
  v.key("early_stopping_patience", t.early_stopping_patience, Range{0, limits::kSteps});
  v.key("on_bad_row", t.on_bad_row);
}

template <class V>
void describe(V& v, DistributedSection& d) {
  v.key("backend", d.backend);
  v.key("timeout_seconds", d.timeout_seconds, Range{1, limits::kTimeoutSeconds});
  v.key("bucket_mb", d.bucket_mb, Positive{});
}

// `name` and `output_dir` are read here too; that they are never inherited
// through `extends:` is the loader's business (config_extends.h).
// The keys every run's config starts with (experiments and pretraining).
template <class V, class RunConfig>
void describe_run_keys(V& v, RunConfig& c) {
  v.key("name", c.name);
  v.key("seed", c.seed);
  v.key("threads", c.threads, Range{0, limits::kConfigThreads, "0: one per core"});
  v.key("device", c.device);
  v.key("precision", c.precision);
  v.key("output_dir", c.output_dir);
  v.key("tags", c.tags, Words{});
}

template <class V>
void describe(V& v, ExperimentConfig& c) {
  describe_run_keys(v, c);
  v.section("model", c.model);
  v.task_defaults("task_defaults");  // before the tasks that inherit them
  v.tasks("tasks", c.tasks);
  v.section("train", c.train);
  v.section("distributed", c.distributed);
}

// Reads, merges, overrides, expands and validates. Throws UserError naming the
// file and key path of the problem.
ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<std::string>& overrides = {},
                                 const std::vector<std::filesystem::path>& overlays = {});
// The same with overrides that remember where they were written (a sweep file).
ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
                                 const std::vector<std::filesystem::path>& overlays);

// The first file a new run of `config` reads that does not exist, as "key:
// path" (relative paths from the current folder): model.pretrained, then each
// task's train, dev and test; none when all do.
std::optional<std::string> first_missing_input(const ExperimentConfig& config);

// The rules across model.* keys (tokenizer kind and its files, PAL sizes),
// for experiments and pretraining configs alike; `source` is the config file
// (a run folder's config.resolved.yaml keeps model.config keys that older
// versions accepted).
void check_model_section(ConfigReader r, const ModelSection& m, const std::filesystem::path& source);

// The YAML tree of a config file: its extends: chain merged, then each
// overlay (without its name and output_dir), then the overrides, then
// ${VAR} expanded. Shared by experiments and pretraining configs.
ConfigNode load_config_layers(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
                              const std::vector<std::filesystem::path>& overlays);

// The fully resolved YAML (every key, defaults included), as written to a run
// folder's config.resolved.yaml; load_experiment of it gives the same config.
std::string resolved_yaml(const ExperimentConfig& config);

// The key paths of the schema ("train.schedule.kind"; a task's keys under
// "tasks.<task>"), in order.
std::vector<std::string> experiment_keys();

// ---------------------------------------------------------------------------
// YAML names of the choices.

template <> struct EnumNames<DeviceChoice> {
  static constexpr std::pair<DeviceChoice, const char*> table[] = {
      {DeviceChoice::cpu, "cpu"}, {DeviceChoice::cuda, "cuda"}, {DeviceChoice::automatic, "auto"}};
};
template <> struct EnumNames<Precision> {
  static constexpr std::pair<Precision, const char*> table[] = {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}};
};
template <> struct EnumNames<TokenizerKind> {
  static constexpr std::pair<TokenizerKind, const char*> table[] = {{TokenizerKind::automatic, "auto"},
                                                                    {TokenizerKind::wordpiece, "wordpiece"},
                                                                    {TokenizerKind::sentencepiece, "sentencepiece"}};
};
template <> struct EnumNames<Subset> {
  static constexpr std::pair<Subset, const char*> table[] = {{Subset::first, "first"}, {Subset::random, "random"}};
};
template <> struct EnumNames<ScheduleKind> {
  static constexpr std::pair<ScheduleKind, const char*> table[] = {
      {ScheduleKind::constant, "constant"}, {ScheduleKind::linear, "linear"}, {ScheduleKind::cosine, "cosine"}};
};
template <> struct EnumNames<SamplerKind> {
  static constexpr std::pair<SamplerKind, const char*> table[] = {
      {SamplerKind::sequential, "sequential"},     {SamplerKind::round_robin, "round_robin"},
      {SamplerKind::proportional, "proportional"}, {SamplerKind::annealed, "annealed"},
      {SamplerKind::temperature, "temperature"},   {SamplerKind::mixed, "mixed"}};
};
template <> struct EnumNames<PcgradReduction> {
  static constexpr std::pair<PcgradReduction, const char*> table[] = {{PcgradReduction::sum, "sum"},
                                                                      {PcgradReduction::mean, "mean"}};
};
template <> struct EnumNames<DistributedBackend> {
  static constexpr std::pair<DistributedBackend, const char*> table[] = {
      {DistributedBackend::automatic, "auto"}, {DistributedBackend::gloo, "gloo"}, {DistributedBackend::nccl, "nccl"}};
};
template <> struct EnumNames<BadRowPolicy> {
  static constexpr std::pair<BadRowPolicy, const char*> table[] = {{BadRowPolicy::error, "error"},
                                                                   {BadRowPolicy::skip, "skip"}};
};
template <> struct EnumNames<Pooling> {
  static constexpr std::pair<Pooling, const char*> table[] = {
      {Pooling::cls, "cls"}, {Pooling::mean, "mean"}, {Pooling::pooler, "pooler"}};
};
// `none` is no choice: one-text tasks have no pairs.
template <> struct EnumNames<PairMode> {
  static constexpr std::pair<PairMode, const char*> table[] = {{PairMode::siamese, "siamese"},
                                                               {PairMode::cross, "cross"}};
};
template <> struct EnumNames<PairCombine> {
  static constexpr std::pair<PairCombine, const char*> table[] = {
      {PairCombine::concat, "concat"}, {PairCombine::uv, "uv"}, {PairCombine::cosine, "cosine"}};
};
template <> struct EnumNames<CosineMap> {
  static constexpr std::pair<CosineMap, const char*> table[] = {
      {CosineMap::scaled, "scaled"}, {CosineMap::relu, "relu"}, {CosineMap::shifted, "shifted"}};
};
template <> struct EnumNames<SmartUpdate> {
  static constexpr std::pair<SmartUpdate, const char*> table[] = {{SmartUpdate::projected, "projected"},
                                                                  {SmartUpdate::normalized, "normalized"}};
};
template <> struct EnumNames<PalKind> {
  static constexpr std::pair<PalKind, const char*> table[] = {
      {PalKind::none, "none"}, {PalKind::parallel, "parallel"}, {PalKind::top, "top"}};
};

}  // namespace mtbert
