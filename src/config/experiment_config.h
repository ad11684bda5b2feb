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
// - PCGrad (train.pcgrad.enabled) needs train.sampler.kind: mixed,
//   train.grad_accumulation 1 and an encoder that is not frozen; early
//   stopping needs a task with `dev`;
// - model.config holds the HuggingFace keys of config/encoder_config_keys.h;
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
  // The tasks of a step (the mixed sampler's batches) share one encoder pass
  // and one backward, their batches padded to the longest (on a CPU only
  // batches within 10% of padding: train_step.h); false: one pass and one
  // backward per task, which holds one task's activations at a time.
  bool join_tasks = true;
  // On a GPU: each step's passes and update, and the evaluations' forwards,
  // captured in CUDA graphs and replayed (train/step_graphs.h,
  // train/eval_graphs.h), every length padded up to a multiple of
  // cuda_graph_length_multiple so that few shapes, hence few graphs, occur.
  bool cuda_graphs = false;
  int64_t cuda_graph_length_multiple = 32;
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
// the constraints a single value must meet and what the key means (Doc). `v`
// is a schema visitor (config/schema_visitors.h): it reads, writes, lists or
// documents the keys (docs/config-reference.md is generated from here by
// `mtbert config-reference`). Rules that relate several keys live in
// experiment_config.cpp.

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

// What a key means, for the reference page; the reader and the writer ignore
// it. `default_means` says what an empty default stands for ("runs/<name>"),
// where the value alone would say nothing.
struct Doc {
  const char* text;
  const char* default_means = nullptr;
};

template <class V>
void describe(V& v, TokenizerConfig& t) {
  v.key("kind", t.kind, Doc{"auto: the tokenizer of `model.pretrained`; wordpiece: `vocab`; sentencepiece: `model`, "
                            "trained from `train_from` when that file does not exist yet (random encoders)"});
  v.key("vocab", t.vocab, Doc{"vocab.txt, for wordpiece"});
  v.key("lower_case", t.lower_case, Doc{"lowercase and strip accents, for wordpiece"});
  v.key("model", t.model, Doc{"spm.model, for sentencepiece (without it, a trained vocabulary lives only in the "
                              "run folder)"});
  v.key("train_from", t.train_from, Doc{"text files to train SentencePiece on, or [tasks] for the tasks' training "
                                        "sentences"});
  v.key("vocab_size", t.vocab_size, Range{1, limits::kVocabSize},
        Doc{"SentencePiece vocabulary size when training (a ceiling: a small text gets fewer pieces)"});
}

template <class V>
void describe(V& v, PalConfig& p) {
  v.key("kind", p.kind, Doc{"none | parallel: beside every encoder layer, LN(a + FFN(a) + PAL(h)) with "
                            "PAL(h) = GELU(V_D SA(V_E h)) (Stickland & Murray 2019) | top: one low-rank block "
                            "V_D(FFN(LN(x + MH(x)))), x = V_E h, on top of the encoder (the CS224N PAL report)"});
  v.key("rank", p.rank, Range{1, limits::kHiddenSize},
        Doc{"width of the projected space (the paper: 204; the report's top block: 132)"});
  v.key("heads", p.heads, Range{1, limits::kAttentionHeads}, Doc{"attention heads in it (rank must be a multiple)"});
}

template <class V>
void describe(V& v, ModelSection& m) {
  v.key("pretrained", m.pretrained, Doc{"a converted model folder (scripts/convert_hf_checkpoint.py, or a pretraining "
                                        "run's model/)", "a randomly initialized encoder built from `config`"});
  v.key("config", m.config, Doc{"HuggingFace config.json keys applied over the pretrained folder's config (or over "
                                "bert-base's shape for a random encoder), e.g. {hidden_dropout_prob: 0.2} or the "
                                "disentangled-attention keys (docs/deberta.md); a key the encoder does not read is "
                                "an error"});
  v.key("freeze_encoder", m.freeze_encoder, Doc{"train only the heads (and PALs): the reports' \"pretrain\" mode"});
  v.key("add_pooler", m.add_pooler, Doc{"a fresh pooler for a checkpoint without one (mtbert pretrain's), for "
                                        "`pooling: pooler`; it trains with the heads, also when frozen"});
  v.section("pals", m.pals);
  v.section("tokenizer", m.tokenizer);
}

template <class V>
void describe(V& v, SmartConfig& s) {
  v.key("enabled", s.enabled, Doc{"SMART adversarial regularization (Jiang et al. 2020) for this task"});
  v.key("weight", s.weight, NonNegative{}, Doc{"lambda_s, the regularizer's weight"});
  v.key("update", s.update, Doc{"projected: the paper's ascent, then a clamp to the radius ball | normalized: the "
                                "public code's, delta + eta g renormalized to l_inf 1 per token"});
  v.key("steps", s.steps, Range{1, 1000}, Doc{"K, gradient-ascent steps on the perturbation"});
  v.key("step_size", s.step_size, Positive{}, Doc{"eta, the ascent step"});
  v.key("epsilon", s.epsilon, Positive{}, Doc{"guard of the normalizations' divisions"});
  v.key("noise_std", s.noise_std, NonNegative{}, Doc{"sigma of the initial perturbation"});
  v.key("radius", s.radius, Positive{}, Doc{"projected: the l_inf ball around the embeddings (the paper's epsilon)"});
  v.key("bregman", s.bregman, Doc{"add the Bregman proximal point term with a momentum (moving-average) teacher"});
  v.key("bregman_weight", s.bregman_weight, NonNegative{}, Doc{"mu, the Bregman term's weight"});
  v.key("momentum", s.momentum, Fraction{true}, Doc{"beta, the teacher's moving-average rate at first ..."});
  v.key("late_momentum", s.late_momentum, Fraction{true}, Doc{"... and after `late_momentum_after` of the steps"});
  v.key("late_momentum_after", s.late_momentum_after, Fraction{true},
        Doc{"the share of the training steps after which `late_momentum` applies"});
}

template <class V>
void describe(V& v, SiftConfig& s) {
  v.key("enabled", s.enabled, Doc{"SiFT, DeBERTa's perturbation of the normalized embedding-LayerNorm input, for "
                                  "this task"});
  v.key("weight", s.weight, NonNegative{}, Doc{"the regularizer's weight"});
  v.key("step_size", s.step_size, Positive{}, Doc{"the ascent step"});
  v.key("noise_std", s.noise_std, NonNegative{}, Doc{"sigma of the initial perturbation (clamped to 2 sigma)"});
}

template <class V>
void describe(V& v, TaskConfig& t) {
  v.key("type", t.type, Doc{"the built-in task (sst, para, sts, cfimdb) whose columns, labels and metric this task "
                            "uses", "the task's key"});
  v.key("train", t.train, Doc{"training file (required)"});
  v.key("dev", t.dev, Doc{"evaluated during training; \"\": none"});
  v.key("test", t.test, Doc{"predicted at the end; \"\": none"});
  v.key("limit_train", t.limit_train, AtLeast{0}, Doc{"use only N training rows (0: all), for smoke runs"});
  v.key("limit_dev", t.limit_dev, AtLeast{0}, Doc{"use only N dev rows (0: all)"});
  v.key("limit_test", t.limit_test, AtLeast{0}, Doc{"use only N test rows (0: all)"});
  v.key("subset", t.subset, Doc{"which rows the limits keep: first (the first N) | random (N drawn with `seed`, kept "
                                "in file order)"});
  v.key("train_fraction", t.train_fraction, Fraction{true},
        Doc{"keep this share of the training rows, after limit_train: drawn with `seed`, kept in file order (0.3: "
            "\"trims the data by 70%\")"});
  v.key("loss_weight", t.loss_weight, NonNegative{}, Doc{"this task's loss is multiplied by it"});
  v.key("pooling", t.pooling, Doc{"the sentence vector: cls (first token) | mean (masked mean) | pooler (BERT's tanh "
                                  "pooler)"});
  v.key("pair_mode", t.pair_mode, Doc{"pair tasks: cross (one input \"[CLS] a [SEP] b [SEP]\") | siamese (each "
                                      "sentence encoded alone)"});
  v.key("combine", t.combine, Doc{"siamese pairs: concat ([u, v, |u-v|, u*v] -> linear) | uv ([u, v] -> linear) | "
                                  "cosine (cos(u, v) through cosine_map)"});
  v.key("cosine_map", t.cosine_map, Doc{"cosine heads: scaled (STS 5 cos; para clamp(cos, 0, 1)) | relu (5 ReLU(cos); "
                                        "ReLU(cos)) | shifted (2.5 (cos + 1); (cos + 1) / 2)"});
  v.key("sentence_projection", t.sentence_projection,
        Doc{"siamese pairs: one linear layer applied to each sentence vector before they are combined"});
  v.key("dropout", t.dropout, Fraction{false},
        Doc{"dropout before the head's linear layer (cosine heads: on u and v)"});
  v.key("max_length", t.max_length, Range{3, limits::kPositions, "[CLS], a token, [SEP]"},
        Doc{"tokens per input, [CLS] and [SEP] included; longer inputs are truncated"});
  v.section("smart", t.smart);
  v.section("sift", t.sift);
}

template <class V>
void describe(V& v, ScheduleConfig& s) {
  v.key("kind", s.kind, Doc{"constant | linear | cosine: a linear warmup from 0 to lr, then constant, or a linear or "
                            "cosine decay that reaches final_lr at the last step"});
  v.key("warmup_epochs", s.warmup_epochs, NonNegative{}, Doc{"warmup length in epochs (passes over the data) ..."});
  v.key("warmup_steps", s.warmup_steps, Range{0, limits::kSteps}, Doc{"... or in optimizer steps (not both)"});
  v.key("final_lr", s.final_lr, NonNegative{}, Doc{"floor of the linear or cosine decay (at most lr)"});
}

template <class V>
void describe(V& v, SamplerConfig& s) {
  v.key("kind", s.kind, Doc{"which task each step trains on: sequential (all batches of the first task, then the "
                            "second's, ...) | round_robin (one batch of each task in turn; finished tasks drop out) | "
                            "proportional (task t with probability ~ N_t, its number of examples) | annealed "
                            "(~ N_t^alpha, alpha = 1 - (1 - anneal_min)(e - 1)/(E - 1) in epoch e of E) | temperature "
                            "(~ N_t^(1/temperature)) | mixed (a batch of every task in every step, losses summed)"});
  v.key("temperature", s.temperature, Positive{}, Doc{"temperature sampling's T"});
  v.key("anneal_min", s.anneal_min, Fraction{true}, Doc{"annealed: alpha in the last epoch"});
  v.key("steps_per_epoch", s.steps_per_epoch, Range{0, limits::kStepsPerEpoch},
        Doc{"0: the tasks' batches per pass, summed (mixed: the largest task's); not for sequential and round_robin"});
}

template <class V>
void describe(V& v, PcgradConfig& p) {
  v.key("enabled", p.enabled, Doc{"PCGrad gradient surgery on the shared encoder (needs `train.sampler.kind: mixed` "
                                  "and an encoder that is not frozen)"});
  v.key("reduction", p.reduction, Doc{"sum | mean of the projected task gradients"});
}

template <class V>
void describe(V& v, TrainSection& t) {
  v.key("epochs", t.epochs, Range{0, limits::kEpochs},
        Doc{"passes over the data; with max_steps > 0, 0 means as many as max_steps takes"});
  v.key("max_steps", t.max_steps, Range{0, limits::kSteps},
        Doc{"> 0: stop after this many optimizer steps (or at the end of `epochs`)"});
  v.key("batch_size", t.batch_size, Range{1, limits::kBatchSize},
        Doc{"examples per batch (per task, for mixed; per rank, when data-parallel)"});
  v.key("eval_batch_size", t.eval_batch_size, Range{1, limits::kBatchSize}, Doc{"examples per evaluation batch"});
  v.key("lr", t.lr, Positive{}, Doc{"peak learning rate of the encoder"});
  v.key("head_lr", t.head_lr, NonNegative{}, Doc{"learning rate of the task heads; 0: the same as lr"});
  v.key("weight_decay", t.weight_decay, NonNegative{},
        Doc{"AdamW's decoupled weight decay (never on biases and LayerNorm weights)"});
  v.key("adam_beta1", t.adam_beta1, Fraction{false}, Doc{"AdamW's beta1"});
  v.key("adam_beta2", t.adam_beta2, Fraction{false}, Doc{"AdamW's beta2"});
  v.key("adam_eps", t.adam_eps, Positive{}, Doc{"AdamW's epsilon"});
  v.key("grad_clip", t.grad_clip, NonNegative{}, Doc{"clip the global gradient L2 norm to this; 0: off"});
  v.key("grad_accumulation", t.grad_accumulation, Range{1, limits::kBatchSize}, Doc{"batches per optimizer step"});
  v.section("schedule", t.schedule);
  v.section("sampler", t.sampler);
  v.section("pcgrad", t.pcgrad);
  v.key("bucket_by_length", t.bucket_by_length, Doc{"batch examples of similar length together (less padding)"});
  v.key("join_tasks", t.join_tasks,
        Doc{"the tasks of a step (mixed sampler) share one encoder pass and one backward, their batches padded to "
            "the longest (on a CPU: only batches within 10% more padding); false: a pass per task (less memory)"});
  v.key("cuda_graphs", t.cuda_graphs,
        Doc{"on a GPU, each step's passes and update, and the evaluations' forwards between steps, "
            "captured in CUDA graphs and replayed (one launch where the host would dispatch thousands); not with "
            "PCGrad, SMART, SiFT or data-parallel ranks; on a CPU ignored"});
  v.key("cuda_graph_length_multiple", t.cuda_graph_length_multiple, Range{1, limits::kPositions},
        Doc{"with cuda_graphs: every batch's length padded up to a multiple of this (at most the model's "
            "max_position_embeddings), so that few shapes, each one graph, occur"});
  v.key("eval_every_steps", t.eval_every_steps, Range{0, limits::kSteps},
        Doc{"evaluate on dev every N optimizer steps; 0: after each epoch"});
  v.key("early_stopping_patience", t.early_stopping_patience, Range{0, limits::kSteps},
        Doc{"stop after N evaluations without a better dev score; 0: off"});
  v.key("on_bad_row", t.on_bad_row, Doc{"a malformed data row: error (naming file and line) | skip (counted)"});
}

template <class V>
void describe(V& v, DistributedSection& d) {
  v.key("backend", d.backend, Doc{"auto (nccl on CUDA, gloo on CPU) | gloo | nccl"});
  v.key("timeout_seconds", d.timeout_seconds, Range{1, limits::kTimeoutSeconds},
        Doc{"a collective waiting longer than this for another rank fails the run"});
  v.key("bucket_mb", d.bucket_mb, Positive{},
        Doc{"gradients are all-reduced in flat buckets of this many MB (PyTorch DDP's default)"});
}

// `name` and `output_dir` are read here too; that they are never inherited
// through `extends:` is the loader's business (config_extends.h).
// The keys every run's config starts with (experiments and pretraining).
template <class V, class RunConfig>
void describe_run_keys(V& v, RunConfig& c) {
  v.key("name", c.name, Doc{"the run's name (never inherited through `extends:`)", "the config file's stem"});
  v.key("seed", c.seed, Doc{"seed of every random choice (initial weights, dropout, data order, task sampling, "
                            "masking)"});
  v.key("threads", c.threads, Range{0, limits::kConfigThreads, "0: one per core"},
        Doc{"CPU threads, LibTorch's and BLAS's; 0: one per core (`--threads` replaces it)"});
  v.key("device", c.device, Doc{"cpu | cuda | auto (cuda when there is a GPU)"});
  v.key("precision", c.precision, Doc{"fp32 | bf16: forward passes under bf16 autocast with float32 master weights "
                                      "(CUDA, or CPUs with bf16 instructions; elsewhere emulated and slower)"});
  v.key("output_dir", c.output_dir, Doc{"the run folder (never inherited through `extends:`)", "runs/<name>"});
  v.key("tags", c.tags, Words{}, Doc{"labels recorded in summary.json, e.g. [smoke] for runs that are not the papers' "
                                     "setting (mtbert report then prints a banner)"});
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
// path" (relative paths from the current folder): the model section's files
// (config/model_inputs.h), then each task's train, dev and test; none when
// all do.
std::optional<std::string> first_missing_input(const ExperimentConfig& config);

// The rules across model.* keys (model.config's values together, tokenizer
// kind and its files, PAL sizes), for experiments and pretraining configs alike.
void check_model_section(ConfigReader r, const ModelSection& m);

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
