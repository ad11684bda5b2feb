#include "config/experiment_config.h"

#include <cstdlib>

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "support/user_error_of.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;

namespace {

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::filesystem::path base_yaml() { return mtbert::test::source_dir() / "experiments" / "base.yaml"; }

// Loads `text` written as `dir/name` and returns the error message.
std::string error_of(const mtbert::test::TempDir& dir, const std::string& text,
                     const std::vector<std::string>& overrides = {}, const std::string& name = "x.yaml") {
  const auto path = dir.write(name, text);
  return mtbert::test::user_error_of([&] { mtbert::load_experiment(path, overrides); });
}

const char* const kMinimal = "tasks:\n  sst:\n    train: a.csv\n";

}  // namespace

TEST_CASE("experiments/base.yaml holds the reports' setup", "[experiment_config]") {
  // The data need not exist to load: the readers check the files later.
  const ScopedEnv data("MTBERT_DATA", "/nonexistent/data");
  const ScopedEnv models("MTBERT_MODELS", nullptr);
  const auto c = mtbert::load_experiment(base_yaml());
  CHECK(c.name == "base");
  CHECK(c.source == base_yaml());
  CHECK(c.output_dir == "runs/base");
  CHECK(c.seed == 11711);
  CHECK(c.model.pretrained == "models/bert-base-uncased");
  CHECK(c.model.tokenizer.kind == mtbert::TokenizerKind::automatic);
  CHECK_FALSE(c.model.freeze_encoder);
  REQUIRE(c.tasks.size() == 3);
  CHECK(c.tasks[0].name == "sst");
  CHECK(c.tasks[1].name == "para");
  CHECK(c.tasks[2].name == "sts");
  CHECK(c.tasks[1].type == "para");
  CHECK(c.tasks[0].train == "/nonexistent/data/ids-sst-train.csv");
  CHECK(c.tasks[1].train == "/nonexistent/data/quora-dev-split-train.csv");
  CHECK(c.tasks[1].dev == "/nonexistent/data/quora-dev-split-dev.csv");
  CHECK(c.tasks[2].test == "/nonexistent/data/sts-test-student.csv");
  for (const auto& t : c.tasks) {
    INFO(t.name);
    CHECK(t.dropout == 0.3);
    CHECK(t.max_length == 128);
    CHECK_FALSE(t.smart.enabled);
  }
  CHECK(c.train.epochs == 10);
  CHECK(c.train.batch_size == 16);
  CHECK(c.train.lr == 1e-5);
  CHECK(c.train.schedule.kind == mtbert::ScheduleKind::linear);
  CHECK(c.train.schedule.warmup_epochs == 1);
  CHECK(c.train.schedule.final_lr == 1e-7);
  CHECK(c.train.sampler.kind == mtbert::SamplerKind::proportional);
  CHECK_FALSE(c.train.pcgrad.enabled);

  const ScopedEnv models_set("MTBERT_MODELS", "/models");
  const ScopedEnv data_unset("MTBERT_DATA", nullptr);
  const auto d = mtbert::load_experiment(base_yaml());
  CHECK(d.model.pretrained == "/models/bert-base-uncased");
  CHECK(d.tasks[0].dev == "../shared/data/ids-sst-dev.csv");
}

TEST_CASE("base.yaml reads the shared data folder when pointed at it", "[experiment_config]") {
  const auto shared = mtbert::test::shared_data_dir();
  if (!shared) MTBERT_SKIP("../shared/data is absent");
  const ScopedEnv data("MTBERT_DATA", shared->c_str());
  for (const auto& t : mtbert::load_experiment(base_yaml()).tasks) {
    INFO(t.name);
    CHECK(std::filesystem::is_regular_file(t.train));
    CHECK(std::filesystem::is_regular_file(t.dev));
    if (!t.test.empty()) CHECK(std::filesystem::is_regular_file(t.test));
  }
}

TEST_CASE("an experiment extends base.yaml and changes a few keys", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const ScopedEnv data("MTBERT_DATA", "/d");
  const auto path = dir.write("annealed_pcgrad.yaml", "extends: " + base_yaml().string() +
                                                          "\n"
                                                          "tasks:\n  sts: null\n  sst: {dropout: 0.1}\n"
                                                          "train:\n  sampler: {kind: mixed}\n  pcgrad: {enabled: true}\n");
  const auto c = mtbert::load_experiment(path, {"train.lr=2e-5", "tasks.para.limit_train=100"});
  CHECK(c.name == "annealed_pcgrad");
  CHECK(c.output_dir == "runs/annealed_pcgrad");
  REQUIRE(c.tasks.size() == 2);
  CHECK(c.tasks[0].dropout == 0.1);
  CHECK(c.tasks[0].train == "/d/ids-sst-train.csv");
  CHECK(c.tasks[1].limit_train == 100);
  CHECK(c.train.lr == 2e-5);
  CHECK(c.train.epochs == 10);
  CHECK(c.train.pcgrad.enabled);
  CHECK(c.train.sampler.kind == mtbert::SamplerKind::mixed);
  // name and output_dir from the command line; output_dir follows the name.
  CHECK(mtbert::load_experiment(path, {"name=other"}).output_dir == "runs/other");
  CHECK(mtbert::load_experiment(path, {"output_dir=/scratch/r1"}).output_dir == "/scratch/r1");
}

TEST_CASE("left-out keys take the documented defaults", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto c = mtbert::load_experiment(dir.write("minimal.yaml", std::string(kMinimal) + "model: {pretrained: m}\n"));
  const mtbert::TrainSection train;
  const mtbert::TaskConfig task;
  CHECK(c.name == "minimal");
  CHECK(c.output_dir == "runs/minimal");
  CHECK(c.seed == 11711);
  CHECK(c.device == mtbert::DeviceChoice::cpu);
  CHECK(c.model.config == nlohmann::json::object());
  REQUIRE(c.tasks.size() == 1);
  CHECK(c.tasks[0].type == "sst");
  CHECK(c.tasks[0].dev.empty());
  CHECK(c.tasks[0].dropout == task.dropout);
  CHECK(c.tasks[0].smart.radius == 1e-5);
  CHECK(c.tasks[0].smart.update == mtbert::SmartUpdate::projected);
  CHECK(c.tasks[0].sift.weight == 3.0);
  CHECK(c.model.pals.kind == mtbert::PalKind::none);
  CHECK(c.model.pals.rank == 204);
  CHECK(c.model.pals.heads == 6);
  CHECK(c.train.lr == train.lr);
  CHECK(c.train.sampler.kind == train.sampler.kind);
  CHECK(c.train.schedule.kind == train.schedule.kind);
  CHECK(c.train.adam_eps == train.adam_eps);
}

TEST_CASE("model.config keeps HuggingFace keys as JSON and checks the keys and types it knows", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto c = mtbert::load_experiment(dir.write(
      "x.yaml", std::string(kMinimal) +
                    "model:\n  pretrained: m\n  config:\n    hidden_dropout_prob: 0.2\n    num_hidden_layers: 2\n"
                    "    hidden_act: gelu_new\n    relative_attention: true\n    model_type: bert\n"
                    "    pos_att_type: [c2p, p2c]\n"));
  CHECK(c.model.config["hidden_dropout_prob"] == 0.2);
  CHECK(c.model.config["num_hidden_layers"].is_number_integer());
  CHECK(c.model.config["hidden_act"] == "gelu_new");
  CHECK(c.model.config["relative_attention"] == true);
  CHECK(c.model.config["model_type"] == "bert");
  CHECK(c.model.config["pos_att_type"] == nlohmann::json::array({"c2p", "p2c"}));
  CHECK_THROWS_WITH(
      mtbert::load_experiment(dir.write("y.yaml", std::string(kMinimal) +
                                                      "model:\n  pretrained: m\n  config: {hidden_dropout_prob: high}\n")),
      EndsWith("y.yaml:6: model.config.hidden_dropout_prob: expected a number, got 'high'"));
  // Every key's type, in the config reader's one form at the value's line.
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  config:\n    num_hidden_layers: 2.5\n"),
             EndsWith("x.yaml:6: model.config.num_hidden_layers: expected an integer, got '2.5'"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  config:\n    relative_attention: maybe\n"),
             EndsWith("x.yaml:6: model.config.relative_attention: expected true or false, got 'maybe'"));
  CHECK_THAT(error_of(dir, std::string(kMinimal), {"model.config.pos_att_type={c2p: 1}"}),
             StartsWith("command line: model.config.pos_att_type: expected a list of strings"));
  // HuggingFace's "p2c|c2p" string is kept as written, for the encoder to read.
  CHECK(mtbert::load_experiment(dir.write("terms.yaml", std::string(kMinimal) + "model: {pretrained: m, config: "
                                                                                 "{pos_att_type: \"p2c|c2p\"}}\n"))
            .model.config["pos_att_type"] == "p2c|c2p");
  // A key the encoder does not read is named where it was written, with the
  // key it was probably meant to be.
  const auto file = (dir / "x.yaml").string();
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model:\n  config:\n    hidden_size: 64\n    num_hiden_layers: 2\n"),
             Equals(file + ":7: model.config.num_hiden_layers: not a key the encoder reads (did you mean "
                           "\"num_hidden_layers\"?)"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {config: {label: x}}\n"),
             ContainsSubstring(":4: model.config.label: not a key the encoder reads; those are model_type, vocab_size"));
  // A run folder's own config, written by a version that accepted any key,
  // still loads, so that the run can be resumed and evaluated.
  CHECK(error_of(dir, std::string(kMinimal) + "model: {pretrained: m, config: {label: x}}\n", {},
                 "config.resolved.yaml") == "(no error)");
  CHECK_THAT(error_of(dir, std::string(kMinimal), {"model.config.hidden_sise=64"}),
             Equals("command line: model.config.hidden_sise: not a key the encoder reads (did you mean "
                    "\"hidden_size\"?)"));
  CHECK_THROWS_WITH(mtbert::load_experiment(dir.write("z.yaml", std::string(kMinimal) + "model: {config: [1]}\n")),
                    ContainsSubstring("z.yaml:4: model.config: expected a section of HuggingFace config.json keys"));
}

TEST_CASE("unknown keys are errors with a suggestion", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto file = (dir / "x.yaml").string();
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "trian: {lr: 1}\n"),
             Equals(file + ":4: trian: unknown key (did you mean \"train\"?)"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train:\n  schedule: {warmup_epoch: 1}\n"),
             Equals(file + ":5: train.schedule.warmup_epoch: unknown key (did you mean \"warmup_epochs\"?)"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst:\n    train: a.csv\n    dropuot: 0.2\n"),
             Equals(file + ":4: tasks.sst.dropuot: unknown key (did you mean \"dropout\"?)"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst:\n    train: a.csv\n    smart: {enabeld: true}\n"),
             Equals(file + ":4: tasks.sst.smart.enabeld: unknown key (did you mean \"enabled\"?)"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {tokenizer: {vocabsize: 5}}\n"),
             ContainsSubstring("model.tokenizer.vocabsize: unknown key (did you mean \"vocab_size\"?)"));
  CHECK_THAT(error_of(dir, "extend: base.yaml\n" + std::string(kMinimal)),
             Equals(file + ":1: extend: unknown key (did you mean \"extends\"?)"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "wibble: 1\n"),
             ContainsSubstring(":4: wibble: unknown key; the keys here are name, seed, threads"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train: {lr: 1e-5}\n", {"train.lrr=1"}),
             Equals("command line: train.lrr: unknown key (did you mean \"lr\"?)"));
}

TEST_CASE("wrong types name file, key path and value", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto file = (dir / "x.yaml").string();
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train:\n  lr: fast\n"),
             Equals(file + ":5: train.lr: expected a number, got 'fast'"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train: {batch_size: 16.5}\n"),
             ContainsSubstring(":4: train.batch_size: expected an integer, got '16.5'"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train: {bucket_by_length: maybe}\n"),
             ContainsSubstring("train.bucket_by_length: expected true or false, got 'maybe'"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "train: [1, 2]\n"),
             ContainsSubstring(":4: train: expected a section of keys (key: value), got a list"));
  CHECK_THAT(error_of(dir, "tasks: [sst]\n"), ContainsSubstring(":1: tasks: expected a section of keys"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst: a.csv\n"), ContainsSubstring(":2: tasks.sst: expected a section of keys"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "seed: -1\n"),
             ContainsSubstring("seed: expected a non-negative integer, got '-1'"));
  CHECK_THAT(error_of(dir, kMinimal, {"train.lr=fast"}), Equals("command line: train.lr: expected a number, got 'fast'"));
}

TEST_CASE("values out of range name the bound", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const std::string m = kMinimal;
  const std::vector<std::pair<std::string, std::string>> cases{
      {"train: {lr: 0}", "train.lr: must be greater than 0, got 0"},
      {"train: {lr: -1e-5}", "train.lr: must be greater than 0, got -1e-05"},
      {"train: {batch_size: 0}", "train.batch_size: must be between 1 and 65536, got 0"},
      {"train: {batch_size: 1000000000}", "train.batch_size: must be between 1 and 65536, got 1000000000"},
      {"train: {epochs: 0}", "train.epochs: must be at least 1 (or 0 together with max_steps > 0), got 0"},
      {"train: {max_steps: -5}", "train.max_steps: must be between 0 and 1000000000000, got -5"},
      {"train: {adam_beta2: 1}", "train.adam_beta2: must be in [0, 1), got 1"},
      {"train: {grad_accumulation: 0}", "train.grad_accumulation: must be between 1 and 65536, got 0"},
      {"train: {sampler: {steps_per_epoch: 10000000000000}}",
       "train.sampler.steps_per_epoch: must be between 0 and 100000000, got 10000000000000"},
      {"train: {sampler: {temperature: 0}}", "train.sampler.temperature: must be greater than 0, got 0"},
      {"train: {sampler: {anneal_min: 1.5}}", "train.sampler.anneal_min: must be in [0, 1], got 1.5"},
      {"train: {schedule: {final_lr: 1e-3}}", "train.schedule.final_lr: the floor 0.001 is above train.lr 1e-05"},
      {"train: {schedule: {warmup_epochs: 1, warmup_steps: 100}}",
       "train.schedule.warmup_steps: give the warmup in epochs (warmup_epochs) or in steps (warmup_steps), not both"},
      {"threads: -1", "threads: must be between 0 and 1024 (0: one per core), got -1"},
      {"threads: 4294967297", "threads: must be between 0 and 1024 (0: one per core), got 4294967297"},
      {"distributed: {timeout_seconds: 100000000000}", "distributed.timeout_seconds: must be between 1 and 604800"},
  };
  for (const auto& [yaml, message] : cases) {
    INFO(yaml);
    CHECK_THAT(error_of(dir, m + "model: {pretrained: p}\n" + yaml + "\n"), ContainsSubstring(message));
  }
  const std::vector<std::pair<std::string, std::string>> task_cases{
      {"dropout: 1.0", "tasks.sst.dropout: must be in [0, 1), got 1"},
      {"dropout: -0.1", "tasks.sst.dropout: must be in [0, 1), got -0.1"},
      {"max_length: 2", "tasks.sst.max_length: must be between 3 and 65536 ([CLS], a token, [SEP]), got 2"},
      {"limit_train: -1", "tasks.sst.limit_train: must be at least 0, got -1"},
      {"loss_weight: -2", "tasks.sst.loss_weight: must be at least 0, got -2"},
      {"smart: {steps: 0}", "tasks.sst.smart.steps: must be between 1 and 1000, got 0"},
      {"smart: {momentum: 1.5}", "tasks.sst.smart.momentum: must be in [0, 1], got 1.5"},
      {"smart: {late_momentum_after: 2}", "tasks.sst.smart.late_momentum_after: must be in [0, 1], got 2"},
      {"smart: {radius: 0}", "tasks.sst.smart.radius: must be greater than 0, got 0"},
      {"smart: {update: renormalized}", "tasks.sst.smart.update: \"renormalized\" is not one of projected, normalized"},
      {"cosine_map: affine", "tasks.sst.cosine_map: \"affine\" is not one of scaled, relu, shifted"},
      {"sift: {step_size: 0}", "tasks.sst.sift.step_size: must be greater than 0, got 0"},
  };
  for (const auto& [yaml, message] : task_cases) {
    INFO(yaml);
    CHECK_THAT(error_of(dir, m + "    " + yaml + "\nmodel: {pretrained: p}\n"), ContainsSubstring(":4: " + message));
  }
  CHECK_THAT(error_of(dir, m + "model: {tokenizer: {kind: wordpiece, vocab: v.txt, vocab_size: 0}}\n"),
             ContainsSubstring(":4: model.tokenizer.vocab_size: must be between 1 and 4194304, got 0"));
  // epochs may be 0 when max_steps bounds the run.
  CHECK_NOTHROW(mtbert::load_experiment(dir.write("ok.yaml", m + "model: {pretrained: p}\ntrain: {epochs: 0, max_steps: 50}\n")));
}

TEST_CASE("values not among the choices list them, with a suggestion", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto file = (dir / "x.yaml").string();
  const std::string m = std::string(kMinimal) + "model: {pretrained: p}\n";
  CHECK_THAT(error_of(dir, m + "train:\n  schedule:\n    kind: cosin\n"),
             Equals(file + ":7: train.schedule.kind: \"cosin\" is not one of constant, linear, cosine "
                           "(did you mean \"cosine\"?)"));
  CHECK_THAT(error_of(dir, m + "train: {sampler: {kind: aneal}}\n"),
             ContainsSubstring("train.sampler.kind: \"aneal\" is not one of sequential, round_robin, proportional, annealed, "
                      "temperature, mixed (did you mean \"annealed\"?)"));
  CHECK_THAT(error_of(dir, m + "device: gpu\n"), ContainsSubstring("device: \"gpu\" is not one of cpu, cuda, auto"));
  CHECK_THAT(error_of(dir, m + "precision: fp16\n"), ContainsSubstring("precision: \"fp16\" is not one of fp32, bf16"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst: {train: a, pooling: max}\nmodel: {pretrained: p}\n"),
             ContainsSubstring(":2: tasks.sst.pooling: \"max\" is not one of cls, mean, pooler"));
  CHECK_THAT(error_of(dir, m + "train: {pcgrad: {reduction: avg}}\n"),
             ContainsSubstring("train.pcgrad.reduction: \"avg\" is not one of sum, mean"));
  CHECK_THAT(error_of(dir, m + "train: {on_bad_row: ignore}\n"),
             ContainsSubstring("train.on_bad_row: \"ignore\" is not one of error, skip"));
  CHECK_THAT(error_of(dir, "tasks:\n  sentiment: {train: a, type: sstt}\nmodel: {pretrained: p}\n"),
             ContainsSubstring(":2: tasks.sentiment.type: \"sstt\" is not one of sst, para, sts, cfimdb (did you mean \"sst\"?)"));
  CHECK_THAT(error_of(dir, "tasks:\n  stss: {train: a}\nmodel: {pretrained: p}\n"),
             ContainsSubstring(":2: tasks.stss: \"stss\" is not a built-in task (sst, para, sts, cfimdb) (did you mean \"sts\"?)"));
  const auto named = mtbert::load_experiment(
      dir.write("named.yaml", "tasks:\n  sentiment: {train: a, type: sst}\nmodel: {pretrained: p}\n"));
  CHECK(named.tasks[0].name == "sentiment");
  CHECK(named.tasks[0].type == "sst");
}

TEST_CASE("missing required keys are errors", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const auto file = (dir / "x.yaml").string();
  CHECK_THAT(error_of(dir, "seed: 1\n"), ContainsSubstring(file + ": tasks: no tasks: add at least one"));
  CHECK_THAT(error_of(dir, ""), ContainsSubstring(file + ": tasks: no tasks"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst: {dev: d.csv}\nmodel: {pretrained: p}\n"),
             ContainsSubstring(":2: tasks.sst.train: missing: every task needs its training file"));
  CHECK_THAT(error_of(dir, kMinimal),
             ContainsSubstring("model.tokenizer.kind: \"auto\" uses the tokenizer of model.pretrained, which is not set"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {tokenizer: {kind: wordpiece}}\n"),
             ContainsSubstring(":4: model.tokenizer.vocab: kind wordpiece needs vocab"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {tokenizer: {kind: sentencepiece}}\n"),
             ContainsSubstring(":4: model.tokenizer.model: kind sentencepiece needs model (the path of an spm.model) or "
                      "train_from"));
  // Trained into the run folder only.
  CHECK_NOTHROW(mtbert::load_experiment(dir.write(
      "run-only.yaml", std::string(kMinimal) + "model: {tokenizer: {kind: sentencepiece, train_from: [tasks]}}\n")));
  CHECK_NOTHROW(mtbert::load_experiment(
      dir.write("random.yaml", std::string(kMinimal) +
                                   "model: {tokenizer: {kind: sentencepiece, model: spm.model, train_from: tasks}}\n")));
}

TEST_CASE("rules across keys", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  const std::string m = std::string(kMinimal) + "model: {pretrained: p}\n";
  CHECK_THAT(error_of(dir, m + "train:\n  pcgrad: {enabled: true}\n"),
             ContainsSubstring(":6: train.pcgrad.enabled: PCGrad combines the gradients of all tasks in each step: it needs "
                      "train.sampler.kind: mixed (it is \"proportional\")"));
  CHECK_NOTHROW(mtbert::load_experiment(
      dir.write("pcgrad.yaml", m + "train: {pcgrad: {enabled: true}, sampler: {kind: mixed}}\n")));
  // Refused by the loader (so sweep --dry-run sees it), not when training starts.
  CHECK_THAT(error_of(dir, m + "train:\n  pcgrad: {enabled: true}\n  sampler: {kind: mixed}\n  grad_accumulation: 2\n"),
             EndsWith("x.yaml:6: train.pcgrad.enabled: train.pcgrad needs train.grad_accumulation 1 (got 2)"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst:\n    train: a.csv\n    pair_mode: siamese\n    combine: cosine\n"),
             EndsWith("x.yaml:5: tasks.sst.combine: cosine gives one similarity score and cannot predict 5 classes; "
                      "use concat"));
  CHECK_NOTHROW(mtbert::load_experiment(
      dir.write("cosine.yaml", "tasks: {sts: {train: a.csv, pair_mode: siamese, combine: cosine}}\n"
                                 "model: {pretrained: p}\n")));
  CHECK_THAT(error_of(dir, std::string(kMinimal) +
                               "model: {pretrained: p, freeze_encoder: true}\n"
                               "train: {pcgrad: {enabled: true}, sampler: {kind: mixed}}\n"),
             ContainsSubstring("train.pcgrad.enabled: PCGrad acts on the shared encoder, which model.freeze_encoder freezes"));
  CHECK_THAT(error_of(dir, m + "train: {cuda_graphs: true, pcgrad: {enabled: true}, sampler: {kind: mixed}}\n"),
             ContainsSubstring("train.cuda_graphs: CUDA graphs capture the plain step, not PCGrad's surgery"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst: {train: a.csv, smart: {enabled: true}}\nmodel: {pretrained: p}\n"
                           "train: {cuda_graphs: true}\n"),
             ContainsSubstring("train.cuda_graphs: CUDA graphs capture the plain step, not SMART's perturbed passes "
                               "(task sst): disable train.cuda_graphs or tasks.sst.smart.enabled"));
  CHECK_NOTHROW(mtbert::load_experiment(
      dir.write("graphs.yaml", m + "train: {cuda_graphs: true, cuda_graph_length_multiple: 64}\n")));
  CHECK_THAT(error_of(dir, m + "train: {cuda_graph_length_multiple: 0}\n"),
             ContainsSubstring("train.cuda_graph_length_multiple"));
  CHECK_THAT(error_of(dir, m + "device: cpu\ndistributed: {backend: nccl}\n"),
             ContainsSubstring("distributed.backend: NCCL communicates between GPUs: with device: cpu use gloo (or auto)"));
  CHECK_NOTHROW(mtbert::load_experiment(dir.write("gloo.yaml", m + "distributed: {backend: gloo, timeout_seconds: 5}\n")));
  CHECK_THAT(error_of(dir, m + "distributed: {timeout_seconds: 0}\n"), ContainsSubstring("distributed.timeout_seconds"));
  CHECK_THAT(error_of(dir, m + "train: {early_stopping_patience: 3}\n"),
             ContainsSubstring("train.early_stopping_patience: early stopping watches the dev score, but no task has a dev"));
  CHECK_NOTHROW(mtbert::load_experiment(
      dir.write("early.yaml", "tasks: {sst: {train: a, dev: b}}\nmodel: {pretrained: p}\n"
                              "train: {early_stopping_patience: 3}\n")));
  CHECK_THAT(error_of(dir, m + "train: {sampler: {kind: round_robin, steps_per_epoch: 100}}\n"),
             ContainsSubstring("train.sampler.steps_per_epoch: round_robin makes one pass over every task per epoch"));
  CHECK_THAT(error_of(dir, "tasks:\n  sts: {train: a, combine: cosine}\nmodel: {pretrained: p}\n"),
             ContainsSubstring(":2: tasks.sts.combine: cosine combines two separately encoded sentences: it needs "
                      "pair_mode: siamese"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {pretrained: p, pals: {kind: parallel, rank: 100}}\n"),
             ContainsSubstring("model.pals.heads: rank 100 must be a multiple of heads 6"));
  CHECK_THAT(error_of(dir, std::string(kMinimal) + "model: {pretrained: p, pals: {kind: paralel}}\n"),
             ContainsSubstring("model.pals.kind"));
  CHECK_THAT(error_of(dir, m + "name: a/b\n"), ContainsSubstring("name: \"a/b\" cannot name a run folder"));
  CHECK_THAT(error_of(dir, "tasks:\n  s.s: {train: a}\n"),
             ContainsSubstring(":2: tasks.s.s: a task name may only hold letters, digits, _ and -"));
}

TEST_CASE("errors name the file each value came from", "[experiment_config]") {
  const mtbert::test::TempDir dir;
  dir.write("parent.yaml", "tasks:\n  sst: {train: a}\nmodel: {pretrained: p}\ntrain:\n  lr: 1e-5\n  epochs: ten\n");
  const auto parent = (dir / "parent.yaml").string();
  CHECK_THAT(error_of(dir, "extends: parent.yaml\ntrain: {lr: 2e-5}\n", {}, "child.yaml"),
             Equals(parent + ":6: train.epochs: expected an integer, got 'ten'"));
  CHECK_THAT(error_of(dir, "extends: parent.yaml\ntrain: {epochs: 3, lr: 0}\n", {}, "child.yaml"),
             Equals((dir / "child.yaml").string() + ":2: train.lr: must be greater than 0, got 0"));
  CHECK_THAT(error_of(dir, "extends: parent.yaml\n", {"train.epochs=3", "tasks.sst.dev=${NO_SUCH_VAR_MTBERT}"},
                      "child.yaml"),
             ContainsSubstring("command line: tasks.sst.dev: environment variable NO_SUCH_VAR_MTBERT is not set"));
  CHECK_THAT(error_of(dir, "tasks:\n  sst: {train: '${NO_SUCH_VAR_MTBERT}/a'}\n"),
             ContainsSubstring((dir / "x.yaml").string() + ":2: tasks.sst.train: environment variable NO_SUCH_VAR_MTBERT is not "
                                                  "set"));
}

TEST_CASE("tags label a run: a list of words, kept in the resolved YAML", "[experiment_config]") {
  mtbert::test::TempDir dir;
  const std::string m = std::string(kMinimal) + "model: {pretrained: m}\n";
  CHECK(mtbert::load_experiment(dir.write("a.yaml", m)).tags.empty());
  const auto c = mtbert::load_experiment(dir.write("b.yaml", m + "tags: [smoke, pal-v2]\n"));
  CHECK(c.tags == std::vector<std::string>{"smoke", "pal-v2"});
  CHECK(mtbert::load_experiment(dir.write("c.yaml", m + "tags: smoke\n")).tags == std::vector<std::string>{"smoke"});
  CHECK_THAT(error_of(dir, m + "tags: [smoke, \"two words\"]\n"),
             ContainsSubstring("x.yaml:5: tags: \"two words\" is not a tag: a tag is a word of letters, digits, _ and -"));
  CHECK_THAT(error_of(dir, m + "tags: {a: b}\n"), ContainsSubstring("tags: expected a list of strings"));
  const auto text = mtbert::resolved_yaml(c);
  CHECK_THAT(text, ContainsSubstring("\ntags: [\"smoke\", \"pal-v2\"]\n"));
  CHECK(mtbert::load_experiment(dir.write("config.resolved.yaml", text)).tags == c.tags);
}

TEST_CASE("train_fraction keeps a share of a task's training rows, recorded in the resolved YAML", "[experiment_config]") {
  mtbert::test::TempDir dir;
  const std::string m = std::string(kMinimal) + "model: {pretrained: m}\n";
  CHECK(mtbert::load_experiment(dir.write("a.yaml", m)).tasks[0].train_fraction == 1.0);
  const auto c = mtbert::load_experiment(dir.write("b.yaml", m), {"tasks.sst.train_fraction=0.3"});
  CHECK(c.tasks[0].train_fraction == 0.3);
  const auto text = mtbert::resolved_yaml(c);
  CHECK_THAT(text, ContainsSubstring("train_fraction: 0.3"));
  CHECK(mtbert::load_experiment(dir.write("config.resolved.yaml", text)).tasks[0].train_fraction == 0.3);
  CHECK_THAT(error_of(dir, m, {"tasks.sst.train_fraction=0"}),
             ContainsSubstring("tasks.sst.train_fraction: must be above 0"));
  CHECK_THAT(error_of(dir, m, {"tasks.sst.train_fraction=1.5"}), ContainsSubstring("tasks.sst.train_fraction"));
}

TEST_CASE("overlays merge over the experiment after its extends and before overrides", "[experiment_config]") {
  mtbert::test::TempDir dir;
  dir.write("base.yaml", std::string(kMinimal) + "seed: 1\ntrain: {lr: 1.0e-5, epochs: 10}\nmodel: {pretrained: m}\n");
  const auto exp = dir.write("exp.yaml", "extends: base.yaml\ntrain: {lr: 2.0e-5}\ntasks: {sst: {dropout: 0.3}}\n");
  const auto smoke = dir.write("smoke.yaml",
                               "name: ignored\noutput_dir: ignored\ntags: [smoke]\n"
                               "train: {epochs: 1, lr: 3.0e-5}\ntasks: {sst: {limit_train: 64}}\n");
  const auto c = mtbert::load_experiment(exp, {"train.lr=4e-5"}, {smoke});
  CHECK(c.name == "exp");  // an overlay never names the run
  CHECK(c.output_dir == "runs/exp");
  CHECK(c.tags == std::vector<std::string>{"smoke"});
  CHECK(c.train.epochs == 1);
  CHECK(c.train.lr == 4e-5);  // the override wins over the overlay
  CHECK(c.tasks[0].dropout == 0.3);
  CHECK(c.tasks[0].limit_train == 64);
  const std::vector<std::string> none;
  CHECK(mtbert::load_experiment(exp, none, {smoke}).train.lr == 3e-5);  // the overlay wins over the experiment
  CHECK_THROWS_WITH(mtbert::load_experiment(exp, none, {dir / "absent.yaml"}), ContainsSubstring("absent.yaml does not exist"));
  const auto bad = dir.write("bad.yaml", "train:\n  lrr: 1\n");
  CHECK_THROWS_WITH(mtbert::load_experiment(exp, none, {bad}), ContainsSubstring("bad.yaml:2: train.lrr: unknown key"));
}

TEST_CASE("overrides from a sweep file are reported at their line", "[experiment_config]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("e.yaml", std::string(kMinimal) + "model: {pretrained: m}\n");
  const std::vector<mtbert::ConfigOverride> overrides{{"train.lrr=1", {"sweeps/s.yaml", 4}}};
  CHECK_THROWS_WITH(mtbert::load_experiment(path, overrides, {}),
                    ContainsSubstring("sweeps/s.yaml:4: train.lrr: unknown key (did you mean \"lr\"?)"));
}

TEST_CASE("task_defaults: keys every task inherits unless it sets its own", "[experiment_config]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("ablation.yaml",
                              "model: {pretrained: m}\n"
                              "task_defaults:\n"
                              "  pooling: mean\n"
                              "  dropout: 0.2\n"
                              "  smart: {enabled: true}\n"
                              "tasks:\n"
                              "  sst: {train: a.csv}\n"
                              "  para: {train: b.csv, pooling: cls}\n"
                              "  sts: {train: c.csv, smart: {weight: 2}}\n");
  const auto c = mtbert::load_experiment(path);
  REQUIRE(c.tasks.size() == 3);
  CHECK(c.tasks[0].pooling == mtbert::Pooling::mean);
  CHECK(c.tasks[0].dropout == 0.2);
  CHECK(c.tasks[1].pooling == mtbert::Pooling::cls);  // its own
  CHECK(c.tasks[1].dropout == 0.2);
  CHECK(c.tasks[2].smart.enabled);  // nested sections merge key by key
  CHECK(c.tasks[2].smart.weight == 2.0);
  CHECK(c.tasks[0].type == "sst");

  // As one override (a sweep's grid key), and recorded in each task of the
  // resolved config, which has no task_defaults of its own.
  const auto overridden = mtbert::load_experiment(path, {"task_defaults.pooling=pooler"});
  CHECK(overridden.tasks[0].pooling == mtbert::Pooling::pooler);
  CHECK(overridden.tasks[1].pooling == mtbert::Pooling::cls);
  const std::string resolved = mtbert::resolved_yaml(overridden);
  CHECK(resolved.find("task_defaults") == std::string::npos);
  const auto back = mtbert::load_experiment(dir.write("config.resolved.yaml", resolved));
  CHECK(mtbert::resolved_yaml(back) == resolved);
  CHECK(back.tasks[2].pooling == mtbert::Pooling::pooler);

  // Checked as a task's keys are, at their line.
  CHECK_THAT(error_of(dir, "task_defaults:\n  poolng: mean\n" + std::string(kMinimal)),
             ContainsSubstring("x.yaml:2: task_defaults.poolng: unknown key (did you mean \"pooling\"?)"));
  CHECK_THAT(error_of(dir, "task_defaults:\n  dropout: 1.5\n" + std::string(kMinimal)),
             ContainsSubstring("x.yaml:2: task_defaults.dropout: must be in [0, 1)"));
  CHECK_THAT(error_of(dir, "task_defaults:\n  pooling: avg\n" + std::string(kMinimal)),
             ContainsSubstring("task_defaults.pooling: \"avg\" is not one of"));
  CHECK_THAT(error_of(dir, "task_defaults:\n  train: a.csv\n" + std::string(kMinimal)),
             ContainsSubstring("x.yaml:2: task_defaults.train: each task has its own train"));
  CHECK_THAT(error_of(dir, "task_defaults: mean\n" + std::string(kMinimal)),
             ContainsSubstring("task_defaults: expected a section of keys"));
  CHECK_THAT(error_of(dir, kMinimal, {"task_defaults.poolin=mean"}),
             ContainsSubstring("task_defaults.poolin: unknown key (did you mean \"pooling\"?)"));
}
