#include "config/pretrain_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/config_reader.h"
#include "config/model_inputs.h"
#include "config/schema_visitors.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

// The rules across keys; docs/config-reference.md says each in words
// (config/config_reference.cpp): a rule changed here changes there.
void check_pretrain(const ConfigNode& root, const PretrainConfig& c) {
  ConfigReader r(root);
  ConfigReader model = r.section("model");
  check_model_section(model, c.model);
  model.check(!c.model.freeze_encoder, "freeze_encoder", "pretraining trains the encoder: remove freeze_encoder");
  model.check(!c.model.add_pooler, "add_pooler", "pretraining trains no pooler (MLM only): remove add_pooler");
  model.section("pals").check(c.model.pals.kind == PalKind::none, "kind",
                              "PALs are task adapters: pretraining has no tasks (remove model.pals)");
  const TokenizerConfig& tokenizer = c.model.tokenizer;
  model.section("tokenizer")
      .check(tokenizer.kind != TokenizerKind::sentencepiece ||
                 std::find(tokenizer.train_from.begin(), tokenizer.train_from.end(), "tasks") ==
                     tokenizer.train_from.end(),
             "train_from", "[tasks] is for experiments; give the text files to train SentencePiece on");
  ConfigReader corpus = r.section("corpus");
  corpus.check(!c.corpus.files.empty() || !c.corpus.tasks.empty(), "files",
               "the corpus is empty: give files (plain text) and/or tasks (with experiment)");
  corpus.check(c.corpus.tasks.empty() || !c.corpus.experiment.empty(), "experiment",
               "tasks are read from an experiment's task list: give experiment: path/to/experiment.yaml");
  corpus.check(c.corpus.experiment.empty() || !c.corpus.tasks.empty(), "tasks",
               "experiment is read only for the tasks named here, and none is: name them (e.g. [sst, sts]), or "
               "leave experiment out");
  // Every k-th segment is held out, k = round(1 / holdout_fraction) >= 2:
  // above a half, or so small that k overflows, it would hold out half.
  const double holdout = c.corpus.holdout_fraction;
  corpus.check(holdout == 0 || (holdout >= 1e-9 && holdout <= 0.5), "holdout_fraction",
               fmt::format("must be 0 (no held-out segments) or in [1e-9, 0.5], got {}", holdout));
  ConfigReader masking = r.section("masking");
  masking.check(c.masking.mask_token_fraction + c.masking.random_token_fraction <= 1.0, "random_token_fraction",
                fmt::format("mask_token_fraction + random_token_fraction = {} is above 1",
                            c.masking.mask_token_fraction + c.masking.random_token_fraction));
  ConfigReader train = r.section("train");
  train.section("schedule").check(c.train.schedule.final_lr <= c.train.lr, "final_lr",
                                  fmt::format("the floor {} is above train.lr {}", c.train.schedule.final_lr,
                                              c.train.lr));
}

}  // namespace

PretrainConfig load_pretrain_config(const std::filesystem::path& path, const std::vector<std::string>& overrides,
                                    const std::vector<std::filesystem::path>& overlays) {
  std::vector<ConfigOverride> from_command_line;
  for (const auto& text : overrides) from_command_line.push_back(ConfigOverride{text});
  const ConfigNode root = load_config_layers(path, from_command_line, overlays);
  // Said at once, rather than as the first experiment key pretraining lacks.
  if (root.find("tasks") && !root.find("corpus"))
    throw UserError(fmt::format("{} is an experiment (tasks:, no corpus:): train it with mtbert train", path.string()));
  PretrainConfig c;
  c.source = path;
  c.name = path.stem().string();
  SchemaReader reader{ConfigReader(root)};
  describe(reader, c);
  reader.reader().finish({"extends"});
  check_pretrain(root, c);
  if (c.output_dir.empty()) c.output_dir = (std::filesystem::path("runs") / c.name).string();
  return c;
}

std::string resolved_yaml(const PretrainConfig& config) {
  SchemaWriter writer;
  describe(writer, const_cast<PretrainConfig&>(config));  // the writer only reads
  return "# Every key of this pretraining run with its value, defaults included (see "
         "experiments/pretrain/base.yaml).\n" +
         writer.yaml();
}

std::optional<std::string> first_missing_input(const PretrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> inputs = model_inputs(config.model);
  const CorpusConfig& corpus = config.corpus;
  for (const auto& file : corpus.files) inputs.emplace_back("corpus.files", file);
  if (!corpus.tasks.empty()) {
    inputs.emplace_back("corpus.experiment", corpus.experiment);
    if (auto missing = first_missing(inputs)) return missing;
    // The experiment names the tasks' files (a task it lacks is the
    // pretrainer's error, which lists its tasks).
    const ExperimentConfig experiment = load_experiment(corpus.experiment);
    for (const auto& task : experiment.tasks)
      if (std::find(corpus.tasks.begin(), corpus.tasks.end(), task.name) != corpus.tasks.end())
        inputs.emplace_back(fmt::format("tasks.{}.train of {}", task.name, corpus.experiment),
                            task.train);
  }
  return first_missing(inputs);
}

std::vector<std::string> pretrain_keys() {
  KeyLister lister;
  PretrainConfig config;
  describe(lister, config);
  return lister.keys();
}

TrainSection optimizer_settings(const PretrainTrainSection& p) {
  TrainSection t;
  t.lr = p.lr;
  t.weight_decay = p.weight_decay;
  t.adam_beta1 = p.adam_beta1;
  t.adam_beta2 = p.adam_beta2;
  t.adam_eps = p.adam_eps;
  t.grad_clip = p.grad_clip;
  return t;
}

}  // namespace mtbert
