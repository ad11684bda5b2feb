// The training step captured in CUDA graphs (train.cuda_graphs,
// train/step_graphs.h): replays take the eager step's steps, one graph per
// plan and shape, the heads a step did not sample left where they were,
// dropout new at every replay. On a CPU the switch changes nothing.
#include "train/step_graphs.h"

#include <torch/torch.h>

#include "support/test_support.h"
#include "support/tiny_multitask.h"
#include "train/train_step.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

MultitaskModel tiny_model(torch::Device device, double dropout = 0.0) {
  torch::manual_seed(71);
  MultitaskModel model(tiny_encoder(tiny_config(2, dropout)),
                       std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3),
                                             head_spec("para", TaskTarget::binary, 0, PairMode::cross)});
  model->to(device);
  model->train();
  return model;
}

TaskConfig task_config(const std::string& name) {
  TaskConfig t;
  t.name = name;
  return t;
}

// `task`'s batch of `rows` rows of `length` tokens, the same for the same seed.
TaskBatch batch_of(const std::string& task, int64_t length, uint64_t seed, int64_t rows = 4) {
  torch::manual_seed(seed);
  TaskBatch b;
  b.task = task;
  b.segments = {tiny_batch(rows, length)};
  b.labels = task == "sst" ? torch::randint(0, 3, {rows}).to(torch::kFloat) : torch::randint(0, 2, {rows}).to(torch::kFloat);
  for (int64_t i = 0; i < rows; ++i) b.indices.push_back(i);
  return b;
}

// Step k's batches: for the first 16 steps both tasks, at lengths 8 and 16
// in turn, with 4 + 2 rows and 2 + 4 rows in turn (the same stacked shape,
// split otherwise: two plans); then `sst` alone at 8. Each plan is met four
// times: twice eager, captured, replayed.
std::vector<TaskBatch> step_batches(int k) {
  if (k >= 16) return {batch_of("sst", 8, 1000 + k)};
  const int64_t length = k % 2 == 0 ? 8 : 16;
  const int64_t sst_rows = (k / 2) % 2 == 0 ? 4 : 2;
  return {batch_of("sst", length, 1000 + k, sst_rows), batch_of("para", length, 2000 + k, 6 - sst_rows)};
}

TrainSection training(bool graphs) {
  TrainSection t;
  t.lr = 1e-3;
  t.weight_decay = 0.01;
  t.grad_clip = 1.0;
  t.cuda_graphs = graphs;
  t.cuda_graph_length_multiple = 8;  // the lengths above: no padding added
  return t;
}

std::vector<torch::Tensor> snapshot(MultitaskModel& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().cpu().clone());
  return out;
}

double max_difference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

// Parameters after each of `steps` steps of step_batches().
std::vector<std::vector<torch::Tensor>> trajectory(torch::Device device, Precision precision, bool graphs, int steps,
                                                   size_t* captured = nullptr) {
  auto model = tiny_model(device);
  model->eval();  // no dropout: the runs compare step for step
  TrainStep step(model, {task_config("sst"), task_config("para")}, training(graphs), precision, device, steps);
  std::mt19937_64 rng(0);
  std::vector<std::vector<torch::Tensor>> out;
  for (int k = 0; k < steps; ++k) {
    step.accumulate(step_batches(k));
    step.apply(1.0, k, rng);
    out.push_back(snapshot(model));
  }
  if (captured) *captured = step.captured_graphs();
  return out;
}

}  // namespace

TEST_CASE("on a CPU train.cuda_graphs leaves the step as it was", "[train][step][graphs]") {
  const auto eager = trajectory(torch::kCPU, Precision::fp32, false, 4);
  size_t captured = 1;
  const auto switched = trajectory(torch::kCPU, Precision::fp32, true, 4, &captured);
  CHECK(captured == 0);
  for (size_t k = 0; k < eager.size(); ++k) CHECK(max_difference(eager[k], switched[k]) == 0);
}

TEST_CASE("a step replayed from CUDA graphs takes the eager step's steps, step for step", "[train][step][graphs][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const torch::Device gpu(torch::kCUDA, 0);
  for (const auto precision : {Precision::fp32, Precision::bf16}) {
    const int steps = 20;
    const auto eager = trajectory(gpu, precision, false, steps);
    size_t captured = 0;
    const auto replayed = trajectory(gpu, precision, true, steps, &captured);
    // Passes of both tasks at 8 and at 16 tokens, each split two ways, and
    // of sst alone; updates of every parameter and of all but para's head.
    CHECK(captured == 7);
    // The same kernels on the same values: equal but for the order of any
    // atomic sums.
    const double tolerance = precision == Precision::fp32 ? 1e-5 : 1e-3;
    for (int k = 0; k < steps; ++k) {
      INFO("precision " << (precision == Precision::fp32 ? "fp32" : "bf16") << ", step " << k);
      CHECK(max_difference(eager[k], replayed[k]) <= tolerance);
    }
    // para's head was not sampled after step 15: not moved since.
    const auto& last = replayed.back();
    const auto& at_15 = replayed[15];
    auto model = tiny_model(torch::kCPU);
    const auto names = model->named_parameters();
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i].key().rfind("heads.para.", 0) == 0) CHECK(torch::equal(last[i], at_15[i]));
  }
}

TEST_CASE("a replayed step draws new dropout masks every time", "[train][step][graphs][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const torch::Device gpu(torch::kCUDA, 0);
  auto model = tiny_model(gpu, /*dropout=*/0.3);
  TrainSection train = training(true);
  TrainStep step(model, {task_config("sst"), task_config("para")}, train, Precision::fp32, gpu, 10);
  std::mt19937_64 rng(0);
  const auto batches = step_batches(0);
  std::vector<double> losses;
  for (int k = 0; k < 6; ++k) {
    step.accumulate(batches);
    step.apply(0.0, k, rng);  // LR 0: the weights stay, only the masks change
    losses.push_back(step.losses().mean_json()["sst"].get<double>());
    step.losses().reset();
  }
  REQUIRE(step.captured_graphs() == 2);  // captured at k = 2, replayed at 3, 4, 5
  for (int k = 3; k < 6; ++k) {
    INFO("replay at step " << k);
    CHECK(std::isfinite(losses[k]));
    CHECK(losses[k] != losses[k - 1]);
  }
}

TEST_CASE("a batch's length is padded up to the graphs' multiple, within the positions", "[train][step][graphs][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const torch::Device gpu(torch::kCUDA, 0);
  // Lengths 5, 6 and 7 all run as 8 (one graph); 13 would be 16, the tiny
  // model's max_position_embeddings, and 15 too: one more.
  auto model = tiny_model(gpu);
  model->eval();
  TrainStep step(model, {task_config("sst"), task_config("para")}, training(true), Precision::fp32, gpu, 20);
  std::mt19937_64 rng(0);
  int k = 0;
  for (const int64_t length : {5, 6, 7, 5, 6, 13, 15, 13, 15}) {
    step.accumulate({batch_of("sst", length, 10 + k)});
    step.apply(1.0, k++, rng);
  }
  CHECK(step.captured_graphs() == 3);  // sst at 8, sst at 16, the update
  const auto loss = step.losses().mean_json()["sst"].get<double>();
  CHECK(std::isfinite(loss));
}
