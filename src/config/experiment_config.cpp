#include "config/experiment_config.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_extends.h"
#include "config/config_overrides.h"
#include "config/env_expansion.h"
#include "config/model_inputs.h"
#include "config/schema_visitors.h"
#include "config/yaml_merge.h"
#include "core/did_you_mean.h"
#include "core/user_error.h"
#include "data/task_spec.h"
#include "models/model_config.h"

namespace mtbert {

namespace {

// ---------------------------------------------------------------------------
// Rules that relate several keys (single values are checked as they are read,
// by the schema), each reported at the origin of the value concerned.
// docs/config-reference.md says each in words (config/config_reference.cpp):
// a rule changed here changes there.


void check_task(ConfigReader tasks, const TaskConfig& t) {
  tasks.check(is_config_word(t.name), t.name, "a task name may only hold letters, digits, _ and -");
  const std::vector<std::string> builtin = builtin_task_names();
  ConfigReader r = tasks.section(t.name);
  if (r.has("type")) {
    r.check_choice("type", t.type, builtin);
  } else {
    tasks.check(std::find(builtin.begin(), builtin.end(), t.name) != builtin.end(), t.name,
                fmt::format("\"{}\" is not a built-in task ({}){}: add type: with the one it is", t.name,
                            fmt::join(builtin, ", "), did_you_mean_suffix(t.name, builtin)));
  }
  r.check(!t.train.empty(), "train", "missing: every task needs its training file (train: path/to/file.csv)");
  r.check(t.train_fraction > 0, "train_fraction",
          "must be above 0 (the share of the training rows kept, up to 1: all of them)");
  r.check(t.combine == PairCombine::concat || t.pair_mode == PairMode::siamese, "combine",
          fmt::format("{} combines two separately encoded sentences: it needs pair_mode: siamese",
                      enum_name(t.combine)));
  r.check(!t.sentence_projection || t.pair_mode == PairMode::siamese, "sentence_projection",
          "projects each of two separately encoded sentences: it needs pair_mode: siamese");
  const TaskSpec& spec = builtin_task(t.type);
  r.check(!(t.combine == PairCombine::cosine && spec.target == TaskTarget::classes), "combine",
          fmt::format("cosine gives one similarity score and cannot predict {} classes; use concat",
                      spec.num_classes));
}

void check_train(ConfigReader r, const TrainSection& t) {
  r.check(t.epochs >= 1 || t.max_steps > 0, "epochs",
          fmt::format("must be at least 1 (or 0 together with max_steps > 0), got {}", t.epochs));

  ConfigReader schedule = r.section("schedule");
  const ScheduleConfig& s = t.schedule;
  schedule.check(s.warmup_epochs == 0 || s.warmup_steps == 0, "warmup_steps",
                 "give the warmup in epochs (warmup_epochs) or in steps (warmup_steps), not both");
  schedule.check(s.final_lr <= t.lr, "final_lr", fmt::format("the floor {} is above train.lr {}", s.final_lr, t.lr));

  const SamplerConfig& m = t.sampler;
  const bool one_pass = m.kind == SamplerKind::sequential || m.kind == SamplerKind::round_robin;
  r.section("sampler").check(
      m.steps_per_epoch == 0 || !one_pass, "steps_per_epoch",
      fmt::format("{} makes one pass over every task per epoch: steps_per_epoch applies to proportional, "
                  "annealed, temperature and mixed; set it to 0",
                  enum_name(m.kind)));
  // PCGrad needs several task gradients in one step, which only mixed steps
  // give; no other sampler is switched to silently.
  r.section("pcgrad").check(!t.pcgrad.enabled || m.kind == SamplerKind::mixed, "enabled",
                            fmt::format("PCGrad combines the gradients of all tasks in each step: it needs "
                                        "train.sampler.kind: mixed (it is \"{}\")",
                                        enum_name(m.kind)));
  // PCGrad projects the task gradients of one step onto each other; summed
  // over accumulated micro-steps they would no longer be one step's.
  r.section("pcgrad").check(!t.pcgrad.enabled || t.grad_accumulation == 1, "enabled",
                            fmt::format("train.pcgrad needs train.grad_accumulation 1 (got {})", t.grad_accumulation));
}

void check_experiment(const ConfigNode& root, const ExperimentConfig& c) {
  ConfigReader r(root);
  r.check(!c.name.empty() && c.name != "." && c.name != ".." && c.name.find('/') == std::string::npos, "name",
          fmt::format("\"{}\" cannot name a run folder: use letters, digits and punctuation other than /", c.name));
  r.check(!c.tasks.empty(), "tasks", "no tasks: add at least one, e.g. tasks: {sst: {train: data/ids-sst-train.csv}}");
  for (const auto& task : c.tasks) check_task(r.section("tasks"), task);
  check_model_section(r.section("model"), c.model);
  ConfigReader train = r.section("train");
  check_train(train, c.train);

  const bool any_dev =
      std::any_of(c.tasks.begin(), c.tasks.end(), [](const TaskConfig& t) { return !t.dev.empty(); });
  train.check(c.train.early_stopping_patience == 0 || any_dev, "early_stopping_patience",
              "early stopping watches the dev score, but no task has a dev file: give one a dev: path, or set 0");
  // A captured step replays one pass per task set and shape; PCGrad, SMART
  // and SiFT take more passes and host decisions than that (train_step.h).
  train.check(!(c.train.cuda_graphs && c.train.pcgrad.enabled), "cuda_graphs",
              "CUDA graphs capture the plain step, not PCGrad's surgery: disable train.cuda_graphs or train.pcgrad");
  for (const auto& task : c.tasks)
    train.check(!(c.train.cuda_graphs && (task.smart.enabled || task.sift.enabled)), "cuda_graphs",
                fmt::format("CUDA graphs capture the plain step, not {}'s perturbed passes (task {}): disable "
                            "train.cuda_graphs or tasks.{}.{}.enabled",
                            task.smart.enabled ? "SMART" : "SiFT", task.name, task.name,
                            task.smart.enabled ? "smart" : "sift"));
  train.section("pcgrad").check(!(c.train.pcgrad.enabled && c.model.freeze_encoder), "enabled",
                                "PCGrad acts on the shared encoder, which model.freeze_encoder freezes: disable one");
  r.section("distributed").check(!(c.distributed.backend == DistributedBackend::nccl && c.device == DeviceChoice::cpu),
                                 "backend", "NCCL communicates between GPUs: with device: cpu use gloo (or auto)");
}

// Types, names and single values first (a misspelled key is reported as such
// rather than through the default that took its place), then the rules
// across keys.
ExperimentConfig read_experiment(const ConfigNode& root, const std::filesystem::path& path) {
  // Said at once, rather than as the first pretraining key an experiment lacks.
  if (root.find("corpus") && !root.find("tasks"))
    throw UserError(fmt::format("{} is a pretraining config (corpus:, no tasks:): run it with mtbert pretrain",
                                path.string()));
  ExperimentConfig c;
  c.source = path;
  c.name = path.stem().string();
  SchemaReader reader{ConfigReader(root)};
  describe(reader, c);
  reader.reader().finish({"extends"});
  check_experiment(root, c);
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

std::optional<std::string> first_missing_input(const ExperimentConfig& config) {
  std::vector<std::pair<std::string, std::string>> inputs = model_inputs(config.model);
  for (const auto& task : config.tasks) {
    inputs.emplace_back(fmt::format("tasks.{}.train", task.name), task.train);
    inputs.emplace_back(fmt::format("tasks.{}.dev", task.name), task.dev);
    inputs.emplace_back(fmt::format("tasks.{}.test", task.name), task.test);
  }
  return first_missing(inputs);
}

void check_model_section(ConfigReader r, const ModelSection& m) {
  // The keys and their types were read by the schema (read_encoder_config);
  // the values are checked together here over bert-base's shape, and again
  // once merged with the pretrained folder's config.
  model_config_from_json(m.config, fmt::format("{}: {}", r.origin("config").describe(), r.key_path("config")));
  r.section("pals").check(m.pals.rank % m.pals.heads == 0, "heads",
                          fmt::format("rank {} must be a multiple of heads {} (each head gets rank / heads features)",
                                      m.pals.rank, m.pals.heads));
  r.check(!m.add_pooler || !m.pretrained.empty(), "add_pooler",
          "a random encoder has its pooler already: add_pooler is for a pretrained checkpoint without one");
  ConfigReader tr = r.section("tokenizer");
  const TokenizerConfig& t = m.tokenizer;
  tr.check(t.kind != TokenizerKind::automatic || !m.pretrained.empty(), "kind",
           "\"auto\" uses the tokenizer of model.pretrained, which is not set: set model.pretrained, or choose "
           "wordpiece (with vocab) or sentencepiece (with model)");
  tr.check(t.kind != TokenizerKind::wordpiece || !t.vocab.empty(), "vocab",
           "kind wordpiece needs vocab: the path of a vocab.txt");
  tr.check(t.kind != TokenizerKind::sentencepiece || !t.model.empty() || !t.train_from.empty(), "model",
           "kind sentencepiece needs model (the path of an spm.model) or train_from (texts to train one on, "
           "into the run folder)");
}

ConfigNode load_config_layers(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
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
  return root;
}

ExperimentConfig load_experiment(const std::filesystem::path& path, const std::vector<ConfigOverride>& overrides,
                                 const std::vector<std::filesystem::path>& overlays) {
  return read_experiment(load_config_layers(path, overrides, overlays), path);
}

std::string resolved_yaml(const ExperimentConfig& config) {
  SchemaWriter writer;
  describe(writer, const_cast<ExperimentConfig&>(config));  // the writer only reads
  return "# Every key of this experiment with its value, defaults included (see experiments/base.yaml).\n" +
         writer.yaml();
}

std::vector<std::string> experiment_keys() {
  KeyLister lister;
  ExperimentConfig config;
  describe(lister, config);
  return lister.keys();
}

}  // namespace mtbert
