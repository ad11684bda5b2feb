// The training loop end to end on small synthetic tasks: it learns, it writes
// the run folder, and a run interrupted and resumed ends exactly where an
// uninterrupted one does.
#include "train/trainer.h"

#include <cmath>
#include <fstream>

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
};

// Trains `config` into `dir`; with `stop_at` > 0 the run is stopped after that
// many optimizer steps (as SIGINT would) and then resumed by a new Trainer
// from the run folder alone.
Run train(const ExperimentConfig& config, const fs::path& dir, int64_t stop_at = 0) {
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
      return {run.read_summary(), run.read_metrics(), read_safetensors(dir / "checkpoints" / "last" / "model.safetensors").tensors};
    }
    REQUIRE(end == TrainEnd::interrupted);
    trainer.finish(end, "test");
    REQUIRE(run.read_summary()["status"] == "interrupted");
  }
  Experiment e = reopen_experiment(config, run);
  Trainer trainer(e, run);
  trainer.restore_last_checkpoint();
  CHECK(trainer.progress().global_step == stop_at);
  TrainerHooks hooks;
  hooks.show_progress = false;
  const TrainEnd end = trainer.train(hooks);
  REQUIRE(end == TrainEnd::finished);
  trainer.finish(end, "test");
  return {run.read_summary(), run.read_metrics(), read_safetensors(dir / "checkpoints" / "last" / "model.safetensors").tensors};
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

  REQUIRE(straight.metrics.size() == resumed.metrics.size());
  for (size_t i = 0; i < straight.metrics.size(); ++i) {
    CHECK(straight.metrics[i]["step"] == resumed.metrics[i]["step"]);
    CHECK(straight.metrics[i]["dev"] == resumed.metrics[i]["dev"]);
    CHECK(straight.metrics[i]["train_loss"] == resumed.metrics[i]["train_loss"]);
  }
  CHECK(straight.summary["best"] == resumed.summary["best"]);
  for (const auto& [name, tensor] : straight.weights) {
    INFO(name);
    CHECK(torch::equal(tensor, resumed.weights.at(name)));
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
