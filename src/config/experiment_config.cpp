#include "config/experiment_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/user_error.h"
#include "models/model_config.h"
#include "config/config_extends.h"
#include "config/config_overrides.h"
#include "config/config_reader.h"
#include "core/did_you_mean.h"
#include "config/env_expansion.h"
#include "config/yaml_merge.h"

namespace mtbert {

namespace {

// The task types of data/task_spec.h (builtin_task_names()), listed here so
// that a misspelled type is reported with its file and key.
const std::vector<std::string> kBuiltinTasks{"sst", "para", "sts", "cfimdb"};

bool valid_task_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// ---------------------------------------------------------------------------
// Range checks: "must be ..., got X" at the key's origin.

void at_least(const ConfigReader& r, std::string_view key, int64_t value, int64_t min) {
  r.check(value >= min, key, fmt::format("must be at least {}, got {}", min, value));
}

void non_negative(const ConfigReader& r, std::string_view key, double value) {
  r.check(value >= 0, key, fmt::format("must be at least 0, got {}", value));
}

void positive(const ConfigReader& r, std::string_view key, double value) {
  r.check(value > 0, key, fmt::format("must be greater than 0, got {}", value));
}

// [0, 1) or [0, 1].
void unit_interval(const ConfigReader& r, std::string_view key, double value, bool one_allowed) {
  r.check(value >= 0 && (one_allowed ? value <= 1 : value < 1), key,
          fmt::format("must be in [0, 1{}, got {}", one_allowed ? "]" : ")", value));
}

// ---------------------------------------------------------------------------
// model.config: free-form HuggingFace config.json keys, kept as JSON.

nlohmann::json scalar_to_json(const ConfigNode& node) {
  if (node.quoted) return node.text;
  const std::string& t = node.text;
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  const std::string_view digits = !t.empty() && t[0] == '+' ? std::string_view(t).substr(1) : std::string_view(t);
  int64_t integer = 0;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), integer);
      ec == std::errc() && end == digits.data() + digits.size() && !digits.empty())
    return integer;
  double number = 0;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
      ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() && std::isfinite(number))
    return number;
  return t;
}

nlohmann::json node_to_json(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return nullptr;
    case ConfigNode::Kind::scalar: return scalar_to_json(node);
    case ConfigNode::Kind::sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& item : node.items) array.push_back(node_to_json(item));
      return array;
    }
    case ConfigNode::Kind::map: break;
  }
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : node.entries) object[key] = node_to_json(value);
  return object;
}

// ---------------------------------------------------------------------------
// Reading: types and unknown keys, section by section in the order of the
// structs. Nothing else is checked yet, so that a misspelled key is reported
// as such rather than through the default that took its place.

void read_tokenizer(ConfigReader r, TokenizerConfig& t) {
  r.read("kind", t.kind);
  r.read("vocab", t.vocab);
  r.read("lower_case", t.lower_case);
  r.read("model", t.model);
  r.read("train_from", t.train_from);
  r.read("vocab_size", t.vocab_size);
  r.finish();
}

void read_model(ConfigReader r, ModelSection& m) {
  r.read("pretrained", m.pretrained);
  if (const ConfigNode* config = r.raw("config")) {
    r.check(config->is_map(), "config",
            fmt::format("expected a section of HuggingFace config.json keys, got {}", describe_value(*config)));
    m.config = node_to_json(*config);
  }
  r.read("freeze_encoder", m.freeze_encoder);
  {
    ConfigReader p = r.section("pals");
    p.read("kind", m.pals.kind);
    p.read("rank", m.pals.rank);
    p.read("heads", m.pals.heads);
    p.finish();
  }
  read_tokenizer(r.section("tokenizer"), m.tokenizer);
  r.finish();
}

void read_smart(ConfigReader r, SmartConfig& s) {
  r.read("enabled", s.enabled);
  r.read("weight", s.weight);
  r.read("steps", s.steps);
  r.read("step_size", s.step_size);
  r.read("epsilon", s.epsilon);
  r.read("noise_std", s.noise_std);
  r.read("bregman", s.bregman);
  r.read("bregman_weight", s.bregman_weight);
  r.read("momentum", s.momentum);
  r.read("radius", s.radius);
  r.finish();
}

void read_sift(ConfigReader r, SiftConfig& s) {
  r.read("enabled", s.enabled);
  r.read("weight", s.weight);
  r.read("step_size", s.step_size);
  r.read("noise_std", s.noise_std);
  r.finish();
}

TaskConfig read_task(const std::string& name, ConfigReader r) {
  TaskConfig t;
  t.name = name;
  t.type = name;
  r.read("type", t.type);
  r.read("train", t.train);
  r.read("dev", t.dev);
  r.read("test", t.test);
  r.read("limit_train", t.limit_train);
  r.read("limit_dev", t.limit_dev);
  r.read("limit_test", t.limit_test);
  r.read("subset", t.subset);
  r.read("loss_weight", t.loss_weight);
  r.read("pooling", t.pooling);
  r.read("pair_mode", t.pair_mode);
  r.read("combine", t.combine);
  r.read("dropout", t.dropout);
  r.read("max_length", t.max_length);
  read_smart(r.section("smart"), t.smart);
  read_sift(r.section("sift"), t.sift);
  r.finish();
  return t;
}

void read_train(ConfigReader r, TrainSection& t) {
  r.read("epochs", t.epochs);
  r.read("max_steps", t.max_steps);
  r.read("batch_size", t.batch_size);
  r.read("eval_batch_size", t.eval_batch_size);
  r.read("lr", t.lr);
  r.read("head_lr", t.head_lr);
  r.read("weight_decay", t.weight_decay);
  r.read("adam_beta1", t.adam_beta1);
  r.read("adam_beta2", t.adam_beta2);
  r.read("adam_eps", t.adam_eps);
  r.read("grad_clip", t.grad_clip);
  r.read("grad_accumulation", t.grad_accumulation);
  {
    ConfigReader s = r.section("schedule");
    s.read("kind", t.schedule.kind);
    s.read("warmup_epochs", t.schedule.warmup_epochs);
    s.read("warmup_steps", t.schedule.warmup_steps);
    s.read("final_lr", t.schedule.final_lr);
    s.finish();
  }
  {
    ConfigReader s = r.section("sampler");
    s.read("kind", t.sampler.kind);
    s.read("temperature", t.sampler.temperature);
    s.read("anneal_min", t.sampler.anneal_min);
    s.read("steps_per_epoch", t.sampler.steps_per_epoch);
    s.finish();
  }
  {
    ConfigReader p = r.section("pcgrad");
    p.read("enabled", t.pcgrad.enabled);
    p.read("reduction", t.pcgrad.reduction);
    p.finish();
  }
  r.read("bucket_by_length", t.bucket_by_length);
  r.read("eval_every_steps", t.eval_every_steps);
  r.read("early_stopping_patience", t.early_stopping_patience);
  r.read("on_bad_row", t.on_bad_row);
  r.finish();
}

// ---------------------------------------------------------------------------
// Checking: choices, ranges, required keys and rules across keys, each at
// the origin of the value concerned.

void check_model(ConfigReader r, const ModelSection& m) {
  // Types of the keys the encoder knows are checked now; their values once
  // merged with the pretrained config.
  model_config_from_json(m.config, fmt::format("{}: {}", r.origin("config").describe(), r.key_path("config")));
  ConfigReader pr = r.section("pals");
  pr.check_choice("kind", m.pals.kind, {"none", "parallel", "top"});
  at_least(pr, "rank", m.pals.rank, 1);
  at_least(pr, "heads", m.pals.heads, 1);
  pr.check(m.pals.rank % m.pals.heads == 0, "heads",
           fmt::format("rank {} must be a multiple of heads {} (each head gets rank / heads features)", m.pals.rank,
                       m.pals.heads));
  ConfigReader tr = r.section("tokenizer");
  const TokenizerConfig& t = m.tokenizer;
  tr.check_choice("kind", t.kind, {"auto", "wordpiece", "sentencepiece"});
  at_least(tr, "vocab_size", t.vocab_size, 1);
  tr.check(t.kind != "auto" || !m.pretrained.empty(), "kind",
           "\"auto\" uses the tokenizer of model.pretrained, which is not set: set model.pretrained, or choose "
           "wordpiece (with vocab) or sentencepiece (with model)");
  tr.check(t.kind != "wordpiece" || !t.vocab.empty(), "vocab", "kind wordpiece needs vocab: the path of a vocab.txt");
  tr.check(t.kind != "sentencepiece" || !t.model.empty() || !t.train_from.empty(), "model",
           "kind sentencepiece needs model (the path of an spm.model) or train_from (texts to train one on, "
           "into the run folder)");
}

void check_smart(ConfigReader r, const SmartConfig& s) {
  non_negative(r, "weight", s.weight);
  at_least(r, "steps", s.steps, 1);
  positive(r, "step_size", s.step_size);
  positive(r, "epsilon", s.epsilon);
  non_negative(r, "noise_std", s.noise_std);
  non_negative(r, "bregman_weight", s.bregman_weight);
  unit_interval(r, "momentum", s.momentum, false);
  non_negative(r, "radius", s.radius);
}

void check_sift(ConfigReader r, const SiftConfig& s) {
  non_negative(r, "weight", s.weight);
  positive(r, "step_size", s.step_size);
  non_negative(r, "noise_std", s.noise_std);
}

void check_task(ConfigReader tasks, const TaskConfig& t) {
  tasks.check(valid_task_name(t.name), t.name, "a task name may only hold letters, digits, _ and -");
  ConfigReader r = tasks.section(t.name);
  if (r.has("type")) {
    r.check_choice("type", t.type, kBuiltinTasks);
  } else {
    tasks.check(std::find(kBuiltinTasks.begin(), kBuiltinTasks.end(), t.name) != kBuiltinTasks.end(), t.name,
                fmt::format("\"{}\" is not a built-in task ({}){}: add type: with the one it is", t.name,
                            fmt::join(kBuiltinTasks, ", "), did_you_mean_suffix(t.name, kBuiltinTasks)));
  }
  r.check(!t.train.empty(), "train", "missing: every task needs its training file (train: path/to/file.csv)");
  at_least(r, "limit_train", t.limit_train, 0);
  at_least(r, "limit_dev", t.limit_dev, 0);
  at_least(r, "limit_test", t.limit_test, 0);
  r.check_choice("subset", t.subset, {"first", "random"});
  non_negative(r, "loss_weight", t.loss_weight);
  r.check_choice("pooling", t.pooling, {"cls", "mean", "pooler"});
  r.check_choice("pair_mode", t.pair_mode, {"siamese", "cross"});
  r.check_choice("combine", t.combine, {"concat", "cosine"});
  unit_interval(r, "dropout", t.dropout, false);
  r.check(t.max_length >= 3, "max_length",
          fmt::format("must be at least 3 ([CLS], a token, [SEP]), got {}", t.max_length));
  r.check(t.combine != "cosine" || t.pair_mode == "siamese", "combine",
          "cosine compares two separately encoded sentences: it needs pair_mode: siamese");
  check_smart(r.section("smart"), t.smart);
  check_sift(r.section("sift"), t.sift);
}

void check_train(ConfigReader r, const TrainSection& t) {
  at_least(r, "max_steps", t.max_steps, 0);
  if (t.max_steps > 0) {
    at_least(r, "epochs", t.epochs, 0);
  } else {
    r.check(t.epochs >= 1, "epochs",
            fmt::format("must be at least 1 (or 0 together with max_steps > 0), got {}", t.epochs));
  }
  at_least(r, "batch_size", t.batch_size, 1);
  at_least(r, "eval_batch_size", t.eval_batch_size, 1);
  positive(r, "lr", t.lr);
  non_negative(r, "head_lr", t.head_lr);
  non_negative(r, "weight_decay", t.weight_decay);
  unit_interval(r, "adam_beta1", t.adam_beta1, false);
  unit_interval(r, "adam_beta2", t.adam_beta2, false);
  positive(r, "adam_eps", t.adam_eps);
  non_negative(r, "grad_clip", t.grad_clip);
  at_least(r, "grad_accumulation", t.grad_accumulation, 1);

  ConfigReader schedule = r.section("schedule");
  const ScheduleConfig& s = t.schedule;
  schedule.check_choice("kind", s.kind, {"constant", "linear", "cosine"});
  non_negative(schedule, "warmup_epochs", s.warmup_epochs);
  at_least(schedule, "warmup_steps", s.warmup_steps, 0);
  schedule.check(s.warmup_epochs == 0 || s.warmup_steps == 0, "warmup_steps",
                 "give the warmup in epochs (warmup_epochs) or in steps (warmup_steps), not both");
  non_negative(schedule, "final_lr", s.final_lr);
  schedule.check(s.final_lr <= t.lr, "final_lr", fmt::format("the floor {} is above train.lr {}", s.final_lr, t.lr));

  ConfigReader sampler = r.section("sampler");
  const SamplerConfig& m = t.sampler;
  sampler.check_choice("kind", m.kind, {"sequential", "round_robin", "proportional", "annealed", "temperature", "mixed"});
  positive(sampler, "temperature", m.temperature);
  unit_interval(sampler, "anneal_min", m.anneal_min, true);
  at_least(sampler, "steps_per_epoch", m.steps_per_epoch, 0);
  sampler.check(m.steps_per_epoch == 0 || (m.kind != "sequential" && m.kind != "round_robin"), "steps_per_epoch",
                fmt::format("{} makes one pass over every task per epoch: steps_per_epoch applies to proportional, "
                            "annealed, temperature and mixed; set it to 0",
                            m.kind));

  ConfigReader pcgrad = r.section("pcgrad");
  pcgrad.check_choice("reduction", t.pcgrad.reduction, {"sum", "mean"});
  // PCGrad needs several task gradients in one step, which only mixed steps
  // give; no other sampler is switched to silently.
  pcgrad.check(!t.pcgrad.enabled || m.kind == "mixed", "enabled",
               fmt::format("PCGrad combines the gradients of all tasks in each step: it needs train.sampler.kind: "
                           "mixed (it is \"{}\")",
                           m.kind));

  at_least(r, "eval_every_steps", t.eval_every_steps, 0);
  at_least(r, "early_stopping_patience", t.early_stopping_patience, 0);
  r.check_choice("on_bad_row", t.on_bad_row, {"error", "skip"});
}

ExperimentConfig read_experiment(const ConfigNode& root, const std::filesystem::path& path) {
  ExperimentConfig c;
  c.source = path;
  c.name = path.stem().string();
  {
    ConfigReader r(root);
    r.read("name", c.name);
    r.read("seed", c.seed);
    r.read("threads", c.threads);
    r.read("device", c.device);
    r.read("precision", c.precision);
    r.read("output_dir", c.output_dir);
    r.read("tags", c.tags);
    read_model(r.section("model"), c.model);
    ConfigReader tasks = r.section("tasks");
    for (const auto& name : tasks.keys()) c.tasks.push_back(read_task(name, tasks.section(name)));
    read_train(r.section("train"), c.train);
    r.finish({"extends"});
  }

  ConfigReader r(root);
  r.check(!c.name.empty() && c.name != "." && c.name != ".." && c.name.find('/') == std::string::npos, "name",
          fmt::format("\"{}\" cannot name a run folder: use letters, digits and punctuation other than /", c.name));
  at_least(r, "threads", c.threads, 0);
  for (const auto& tag : c.tags)  // words, like task names: they end up in file names and tables
    r.check(valid_task_name(tag), "tags",
            fmt::format("\"{}\" is not a tag: a tag is a word of letters, digits, _ and -", tag));
  r.check_choice("device", c.device, {"cpu", "cuda", "auto"});
  r.check_choice("precision", c.precision, {"fp32", "bf16"});
  r.check(!c.tasks.empty(), "tasks", "no tasks: add at least one, e.g. tasks: {sst: {train: data/ids-sst-train.csv}}");
  for (const auto& task : c.tasks) check_task(r.section("tasks"), task);
  check_model(r.section("model"), c.model);
  ConfigReader train = r.section("train");
  check_train(train, c.train);

  // Rules across sections.
  const bool any_dev =
      std::any_of(c.tasks.begin(), c.tasks.end(), [](const TaskConfig& t) { return !t.dev.empty(); });
  train.check(c.train.early_stopping_patience == 0 || any_dev, "early_stopping_patience",
              "early stopping watches the dev score, but no task has a dev file: give one a dev: path, or set 0");
  train.section("pcgrad").check(!(c.train.pcgrad.enabled && c.model.freeze_encoder), "enabled",
                                "PCGrad acts on the shared encoder, which model.freeze_encoder freezes: disable one");

  if (c.output_dir.empty()) c.output_dir = (std::filesystem::path("runs") / c.name).string();
  return c;
}

}  // namespace

ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<std::string>& overrides,
                                 const std::vector<std::filesystem::path>& overlays) {
  std::vector<ConfigOverride> from_command_line;
  for (const auto& text : overrides) from_command_line.push_back(ConfigOverride{text});
  return load_experiment(path, from_command_line, overlays);
}

ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
                                 const std::vector<std::filesystem::path>& overlays) {
  ConfigNode root = load_config_with_extends(path);
  for (const auto& overlay : overlays) {
    if (!std::filesystem::is_regular_file(overlay))
      throw UserError(fmt::format("overlay {} does not exist", overlay.string()));
    // Like a file that is extended, an overlay never names the run.
    ConfigNode layer = load_config_with_extends(overlay);
    layer.erase("name");
    layer.erase("output_dir");
    merge_config(root, layer);
  }
  apply_overrides(root, overrides);
  expand_env_in_tree(root);
  return read_experiment(root, path);
}

}  // namespace mtbert
