// Evaluation's forwards captured in CUDA graphs (train.cuda_graphs,
// train/eval_graphs.h): replayed evaluations give the eager evaluation's
// predictions and losses, also after the weights moved in place between
// evaluations (as a replayed optimizer step moves them). On a CPU there are
// none.
#include "train/eval_graphs.h"

#include <torch/torch.h>

#include "support/synthetic_tasks.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "train/evaluator.h"
#include "train/experiment.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

Experiment dev_experiment(ExperimentConfig config, const fs::path& dir) {
  RunDirectory run(dir);
  run.create();
  Experiment e = start_experiment(config, run);
  load_split(e, Split::dev);
  return e;
}

}  // namespace

TEST_CASE("on a CPU train.cuda_graphs leaves evaluation eager", "[eval][graphs]") {
  test::TempDir tmp;
  test::write_synthetic_tasks(tmp.path(), 16, 8, 5);
  auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
  config.device = DeviceChoice::cpu;
  config.train.cuda_graphs = true;
  const Experiment e = dev_experiment(config, tmp.path() / "run");
  CHECK(make_eval_graphs(e) == nullptr);
}

TEST_CASE("evaluations replayed from CUDA graphs give the eager evaluation's predictions and losses",
          "[eval][graphs][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  for (const Precision precision : {Precision::fp32, Precision::bf16}) {
    DYNAMIC_SECTION((precision == Precision::bf16 ? "bf16" : "fp32")) {
      test::TempDir tmp;
      test::write_synthetic_tasks(tmp.path(), 16, 48, 5);
      auto config = test::synthetic_experiment(tmp.path(), tmp.path() / "run");
      config.device = DeviceChoice::cuda;
      config.precision = precision;
      config.train.cuda_graphs = true;
      config.train.cuda_graph_length_multiple = 16;
      config.train.eval_batch_size = 8;  // 6 batches a task: warm-ups, capture and replays in one evaluation
      Experiment e = dev_experiment(config, tmp.path() / "run");
      const auto graphs = make_eval_graphs(e);
      REQUIRE(graphs);
      // The batches are padded up to 16 or 32 columns in the graphs, not
      // without: the same to rounding (bf16: an ulp of a product may differ).
      const double tolerance = precision == Precision::bf16 ? 2e-2 : 1e-4;
      for (int round = 0; round < 3; ++round) {
        if (round > 0) {
          const torch::NoGradGuard no_grad;
          for (auto& p : e.model->parameters()) p.mul_(1.0 - 0.05 * round);
        }
        const Evaluation eager = evaluate(e, Split::dev);
        const Evaluation replayed = evaluate(e, Split::dev, /*comm=*/nullptr, graphs.get());
        REQUIRE(eager.tasks.size() == replayed.tasks.size());
        for (size_t t = 0; t < eager.tasks.size(); ++t) {
          const auto& a = eager.tasks[t];
          const auto& b = replayed.tasks[t];
          INFO("round " << round << ", task " << a.task);
          CHECK(std::abs(a.loss - b.loss) < tolerance);
          REQUIRE(a.predictions.size() == b.predictions.size());
          int differing = 0;
          double worst = 0;
          for (size_t i = 0; i < a.predictions.size(); ++i) {
            worst = std::max(worst, std::abs(a.predictions[i] - b.predictions[i]));
            differing += a.predictions[i] != b.predictions[i];
          }
          // A class may flip where two logits tie to rounding; a score may not move.
          if (a.metric == TaskMetric::accuracy) CHECK(differing <= 1);
          else CHECK(worst < tolerance * 10);
        }
      }
      // One graph per task and length bucket at least, the same ones every
      // round (the weights' moves need no new capture).
      CHECK(graphs->graphs() >= 3);
      const size_t after = graphs->graphs();
      evaluate(e, Split::dev, /*comm=*/nullptr, graphs.get());
      CHECK(graphs->graphs() == after);
    }
  }
}
