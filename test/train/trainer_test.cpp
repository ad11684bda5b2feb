// The training loop end to end on small synthetic tasks: it learns, it writes
// the run folder, and a run interrupted and resumed ends exactly where an
// uninterrupted one does.
#include "train/trainer.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <optional>

#include <torch/torch.h>

#include "core/safetensors.h"
#include "support/synthetic_tasks.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

struct Run {
  nlohmann::json summary;
  std::vector<nlohmann::json> metrics;
  NamedTensors weights;
  NamedTensors teacher;  // SMART's Bregman teacher, when the run has one
};

Run finished_run(const RunDirectory& run, const fs::path& dir) {
  const fs::path last = dir / "checkpoints" / "last";
  Run r{run.read_summary(), run.read_metrics(), read_safetensors(last / "model.safetensors").tensors, {}};
  if (fs::exists(last / "teacher.safetensors")) r.teacher = read_safetensors(last / "teacher.safetensors").tensors;
  return r;
}

// Trains `config` into `dir`; with `stop_at` > 0 the run is stopped after that
// many optimizer steps (as SIGINT would) and then resumed by a new Trainer
// from the run folder alone, on `resume_on` when given.
Run train(const ExperimentConfig& config, const fs::path& dir, int64_t stop_at = 0,
          std::optional<DeviceChoice> resume_on = std::nullopt) {
  RunDirectory run(dir);
  run.create();
  {
    Experiment e = start_experiment(config, run);
    Trainer trainer(e, run);
    TrainerHooks hooks;
    hooks.show_progress = false;
    if (stop_at > 0) hooks.stop_requested = [&] { return trainer.progress().global_step >= stop_at; };
    const TrainEnd end = trainer.train(hooks);
    if (stop_at == 0) {
      REQUIRE(end == TrainEnd::finished);
      trainer.finish(end, "test");
      return finished_run(run, dir);
    }
    REQUIRE(end == TrainEnd::interrupted);
    trainer.finish(end, "test");
    REQUIRE(run.read_summary()["status"] == "interrupted");
  }
  ExperimentConfig resumed = config;
  if (resume_on) resumed.device = *resume_on;
  Experiment e = reopen_experiment(resumed, run);
  Trainer trainer(e, run);
  trainer.restore_last_checkpoint();
  CHECK(trainer.progress().global_step == stop_at);
  TrainerHooks hooks;
  hooks.show_progress = false;
  const TrainEnd end = trainer.train(hooks);
  REQUIRE(end == TrainEnd::finished);
  trainer.finish(end, "test");
  return finished_run(run, dir);
}

// Pairs encoded one sentence at a time and mean-pooled: a one-layer cross
// encoder does not learn to match key words across sentences in 60 steps.
void encode_pairs_apart(ExperimentConfig& config) {
  for (auto& t : config.tasks) {
    if (t.name == "cfimdb") continue;
    t.pair_mode = PairMode::siamese;
    t.pooling = Pooling::mean;
  }
}

bool same_tensors(const NamedTensors& a, const NamedTensors& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, tensor] : a)
    if (!b.count(name) || !torch::equal(tensor, b.at(name))) return false;
  return true;
}

void check_identical(const Run& straight, const Run& resumed) {
  REQUIRE(straight.metrics.size() == resumed.metrics.size());
  for (size_t i = 0; i < straight.metrics.size(); ++i) {
    CHECK(straight.metrics[i]["step"] == resumed.metrics[i]["step"]);
    CHECK(straight.metrics[i]["dev"] == resumed.metrics[i]["dev"]);
    CHECK(straight.metrics[i]["train_loss"] == resumed.metrics[i]["train_loss"]);
  }
  CHECK(straight.summary["best"] == resumed.summary["best"]);
  CHECK(same_tensors(straight.weights, resumed.weights));
  CHECK(same_tensors(straight.teacher, resumed.teacher));
}

// SMART on every task at its defaults, with or without its Bregman proximal
// point (the final report's setting has both).
void enable_smart(ExperimentConfig& config, bool bregman) {
  for (auto& t : config.tasks) {
    t.smart.enabled = true;
    t.smart.bregman = bregman;
  }
}

}  // namespace

TEST_CASE("a short multi-task training learns and fills the run folder", "[trainer]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 320, 120, 1);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
  config.train.epochs = 3;
  encode_pairs_apart(config);
  Run run = train(config, tmp.path() / "run");

  const auto& best = run.summary["best"];
  INFO(run.summary.dump(2));
  // Chance is 0.5 accuracy and r = 0; the synthetic labels are easy.
  CHECK(best["dev"]["cfimdb"]["value"].get<double>() > 0.9);
  CHECK(best["dev"]["para"]["value"].get<double>() > 0.6);
  CHECK(best["dev"]["sts"]["value"].get<double>() > 0.3);
  CHECK(run.summary["status"] == "finished");
  REQUIRE(run.metrics.size() == 3);  // one evaluation per epoch, labeled with the epoch it ends
  for (int64_t i = 0; i < 3; ++i) CHECK(run.metrics[i]["epoch"] == i + 1);
  CHECK(run.summary["parameters"]["per_task"].size() == 3);
  for (const char* file : {"config.resolved.yaml", "model_config.json", "tokenizer/vocab.txt",
                           "checkpoints/best/model.safetensors", "checkpoints/last/optimizer.pt",
                           "predictions/cfimdb-dev-output.csv", "predictions/para-dev-output.csv",
                           "predictions/sts-dev-output.csv"}) {
    INFO(file);
    CHECK(fs::exists(tmp.path() / "run" / file));
  }
}

TEST_CASE("an interrupted run resumes to identical metrics and weights", "[trainer][resume]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 96, 48, 2);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "a");
  config.train.eval_every_steps = 5;
  config.train.sampler.kind = SamplerKind::annealed;
  config.model.config["hidden_dropout_prob"] = 0.1;  // the dropout generator must be restored too
  for (auto& t : config.tasks) t.dropout = 0.2;
  const Run straight = train(config, tmp.path() / "a");
  const Run resumed = train(config, tmp.path() / "b", /*stop_at=*/7);
  check_identical(straight, resumed);
}

// The teacher's weights and its momentum schedule's position are part of the
// checkpoint: without them the resumed run's Bregman term would pull towards
// a different model.
TEST_CASE("a run with SMART and its Bregman teacher resumes to identical weights and teacher", "[trainer][resume][smart]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 96, 48, 2);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "a");
  config.train.eval_every_steps = 5;
  config.model.config["hidden_dropout_prob"] = 0.1;  // SMART's forward passes draw dropout masks too
  enable_smart(config, /*bregman=*/true);
  const Run straight = train(config, tmp.path() / "a");
  REQUIRE_FALSE(straight.teacher.empty());
  const Run resumed = train(config, tmp.path() / "b", /*stop_at=*/7);
  check_identical(straight, resumed);
}

// Each regularizer of the reports switched on in a whole Trainer run (the
// step-level tests in train_step_test.cpp check their gradients exactly): the
// run finishes with finite losses, still learns the easy task, and ends with
// other weights than the same run without it, so the switch reaches the step.
TEST_CASE("SMART, SMART with Bregman, SiFT and PCGrad each train end to end", "[trainer][smart]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 320, 64, 3);
  auto base = test::synthetic_experiment(tmp.path(), tmp.path() / "plain");
  base.train.epochs = 3;
  base.train.sampler.kind = SamplerKind::mixed;  // PCGrad needs every task in each step
  const Run plain = train(base, tmp.path() / "plain");
  REQUIRE(plain.summary["best"]["dev"]["cfimdb"]["value"].get<double>() > 0.8);

  const std::vector<std::pair<std::string, std::function<void(ExperimentConfig&)>>> variants = {
      {"smart", [](ExperimentConfig& c) { enable_smart(c, false); }},
      {"smart-bregman", [](ExperimentConfig& c) { enable_smart(c, true); }},
      {"sift", [](ExperimentConfig& c) { for (auto& t : c.tasks) t.sift.enabled = true; }},
      {"pcgrad", [](ExperimentConfig& c) { c.train.pcgrad.enabled = true; }},
  };
  for (const auto& [name, enable] : variants) {
    INFO(name);
    auto config = base;
    config.output_dir = (tmp.path() / name).string();
    enable(config);
    const Run run = train(config, tmp.path() / name);
    INFO(run.summary.dump(2));
    CHECK(run.summary["status"] == "finished");
    for (const auto& row : run.metrics)
      for (const auto& [task, loss] : row["train_loss"].items()) CHECK(std::isfinite(loss.get<double>()));
    CHECK(run.summary["best"]["dev"]["cfimdb"]["value"].get<double>() > 0.8);
    CHECK_FALSE(same_tensors(run.weights, plain.weights));
    CHECK(run.teacher.empty() == (name != "smart-bregman"));
  }
}

TEST_CASE("a run checkpointed on CUDA resumes on the CPU, and the other way round", "[trainer][resume][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 96, 48, 2);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "cpu");
  config.train.eval_every_steps = 5;
  const Run straight = train(config, tmp.path() / "cpu");
  for (const auto& [first, then] : {std::pair{DeviceChoice::cuda, DeviceChoice::cpu},
                                    std::pair{DeviceChoice::cpu, DeviceChoice::cuda}}) {
    config.device = first;
    const fs::path dir = tmp.path() / (first == DeviceChoice::cuda ? "cuda-then-cpu" : "cpu-then-cuda");
    const Run resumed = train(config, dir, /*stop_at=*/7, then);
    CHECK(resumed.summary["status"] == "finished");
    double worst = 0;
    for (const auto& [name, tensor] : straight.weights)
      worst = std::max(worst, (tensor - resumed.weights.at(name)).abs().max().item<double>());
    INFO(dir.filename().string() << ": max-abs weight difference to the CPU run " << worst);
    CHECK(worst < 1e-3);  // the same run up to the devices' rounding
  }
}

// The trainer with its steps replayed from CUDA graphs: evaluations between
// steps (on the caller's stream, the steps on the graphs' own) and a
// checkpoint written from replayed steps, resumed by a run that captures its
// graphs anew; against the same run without graphs, whose batches are not
// padded up to the graphs' multiple (the same to rounding).
TEST_CASE("a run replayed from CUDA graphs resumes exactly and ends where one without graphs does",
          "[trainer][resume][graphs][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 96, 48, 2);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "eager");
  config.device = DeviceChoice::cuda;
  config.train.eval_every_steps = 5;
  const Run eager = train(config, tmp.path() / "eager");
  config.train.cuda_graphs = true;
  config.train.cuda_graph_length_multiple = 16;
  const Run straight = train(config, tmp.path() / "graphs");
  const Run resumed = train(config, tmp.path() / "graphs-resumed", /*stop_at=*/7);
  // Exact but for the order of a GPU kernel's atomic sums, if any.
  REQUIRE(straight.metrics.size() == resumed.metrics.size());
  for (size_t i = 0; i < straight.metrics.size(); ++i) {
    CHECK(straight.metrics[i]["step"] == resumed.metrics[i]["step"]);
    for (const auto& [task, loss] : straight.metrics[i]["train_loss"].items())
      CHECK(std::abs(loss.get<double>() - resumed.metrics[i]["train_loss"][task].get<double>()) < 1e-5);
  }
  const auto max_difference = [](const Run& a, const Run& b) {
    double worst = 0;
    for (const auto& [name, tensor] : a.weights)
      worst = std::max(worst, (tensor - b.weights.at(name)).abs().max().item<double>());
    return worst;
  };
  const double resume_difference = max_difference(straight, resumed);
  INFO("max-abs weight difference, resumed to straight " << resume_difference);
  CHECK(resume_difference < 1e-5);
  const double eager_difference = max_difference(eager, straight);
  INFO("max-abs weight difference to the run without graphs " << eager_difference);
  CHECK(eager_difference < 1e-3);
}

// Evaluation runs under InferenceMode. What the model keeps per sequence
// length (the relative positions of disentangled attention) and first builds
// during an evaluation must serve the training steps that meet that length
// later: built as inference tensors, they stopped training with "Inference
// tensors cannot be saved for backward". Evaluating after every step makes
// evaluation meet most dev lengths first; a run stopped at an epoch's last
// step resumes (a fresh model) with that epoch's evaluation.
TEST_CASE("training meets lengths that evaluation met first, also when a resumed run evaluates first",
          "[trainer][deberta][cuda]") {
  std::vector<DeviceChoice> devices = {DeviceChoice::cpu};
  if (torch::cuda::is_available()) devices.push_back(DeviceChoice::cuda);
  for (const DeviceChoice device : devices) {
    for (const std::string positions : {"absolute", "c2p|p2c", "c2p|p2c|p2p"}) {
      DYNAMIC_SECTION(positions << (device == DeviceChoice::cuda ? " on CUDA" : " on the CPU")) {
        test::TempDir tmp;
        test::write_synthetic_tasks(tmp.path(), 32, 60, 3);
        auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
        config.device = device;
        if (positions != "absolute") {
          config.model.config["relative_attention"] = true;
          config.model.config["pos_att_type"] = positions;
          config.model.config["max_relative_positions"] = 8;
          config.model.config["position_biased_input"] = false;
        }
        config.train.epochs = 2;
        config.train.eval_every_steps = 1;
        CHECK(train(config, tmp.path() / "every-step").summary["status"] == "finished");

        config.train.epochs = 3;
        config.train.eval_every_steps = 0;  // at each epoch's end only
        const Run straight = train(config, tmp.path() / "straight");
        const int64_t epoch_steps = straight.metrics.at(0)["step"].get<int64_t>();
        const Run resumed = train(config, tmp.path() / "resumed", /*stop_at=*/epoch_steps);
        if (device == DeviceChoice::cpu) check_identical(straight, resumed);
        CHECK(resumed.summary["status"] == "finished");
      }
    }
  }
}

TEST_CASE("epochs 0 with max_steps trains max_steps steps, over as many epochs as that needs", "[trainer]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 96, 48, 2);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
  config.train.epochs = 0;
  config.train.max_steps = 50;  // an epoch here is 6 batches of 16 per task: 50 steps span several
  config.train.sampler.kind = SamplerKind::annealed;  // anneals over the epochs max_steps spans
  RunDirectory run(tmp.path() / "run");
  run.create();
  Experiment e = start_experiment(config, run);
  Trainer trainer(e, run);
  TrainerHooks hooks;
  hooks.show_progress = false;
  REQUIRE(trainer.train(hooks) == TrainEnd::finished);
  CHECK(trainer.progress().global_step == 50);
  CHECK(trainer.progress().epoch > 2);
}

TEST_CASE("bf16 precision trains through autocast with float32 weights", "[trainer][autocast]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 320, 120, 1);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
  config.precision = Precision::bf16;
  config.train.epochs = 3;
  encode_pairs_apart(config);
  Run run = train(config, tmp.path() / "run");
  const auto& best = run.summary["best"];
  INFO(run.summary.dump(2));
  CHECK(best["dev"]["cfimdb"]["value"].get<double>() > 0.9);
  CHECK(best["dev"]["sts"]["value"].get<double>() > 0.3);
  for (const auto& [name, tensor] : run.weights) {
    INFO(name);
    CHECK(tensor.scalar_type() == torch::kFloat);
  }
}

// The DeBERTa-style encoder under bf16 autocast: the disentangled scores op
// gets bf16 scores and a float32 padding bias (its autocast kernel makes them
// one dtype); before that kernel, the first forward pass threw.
TEST_CASE("bf16 precision trains a DeBERTa-style encoder", "[trainer][autocast][deberta]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 64, 32, 1);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
  config.precision = Precision::bf16;
  config.train.epochs = 1;
  config.model.config["relative_attention"] = true;
  config.model.config["pos_att_type"] = "c2p|p2c";
  config.model.config["max_relative_positions"] = 16;
  config.model.config["position_biased_input"] = false;
  Run run = train(config, tmp.path() / "run");
  INFO(run.summary.dump(2));
  CHECK(run.summary["status"] == "finished");
  for (const auto& row : run.metrics)
    for (const auto& [task, loss] : row["train_loss"].items()) CHECK(std::isfinite(loss.get<double>()));
  for (const auto& [name, tensor] : run.weights) {
    INFO(name);
    CHECK(tensor.scalar_type() == torch::kFloat);
    CHECK(torch::isfinite(tensor).all().item<bool>());
  }
}
