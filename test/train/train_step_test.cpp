// The regularizers and PCGrad inside the real training step (TrainStep):
// each changes the step's gradient by exactly its own term, scaled by its
// weight; the Bregman teacher moves by its scheduled momentum; PCGrad's
// projected sum is what AdamW receives.
#include "train/train_step.h"

#include <torch/torch.h>

#include "core/op_profile.h"
#include "core/torch_compat.h"
#include "models/multitask_model.h"
#include "optim/optimizer.h"
#include "optim/pcgrad.h"
#include "support/every_head.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

MultitaskModel tiny_model() {
  torch::manual_seed(71);
  MultitaskModel model(tiny_encoder(tiny_config(2)),
                       std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3),
                                             head_spec("para", TaskTarget::binary, 0, PairMode::cross)});
  model->eval();  // no dropout: equal seeds give equal passes
  return model;
}

TaskBatch batch_of(const std::string& task, uint64_t seed) {
  torch::manual_seed(seed);
  TaskBatch b;
  b.task = task;
  b.segments = {tiny_batch(4, 7)};
  b.labels = task == "sst" ? torch::tensor({0.f, 2.f, 1.f, 2.f}) : torch::tensor({1.f, 0.f, 0.f, 1.f});
  b.indices = {0, 1, 2, 3};
  return b;
}

TaskConfig task_config(const std::string& name) {
  TaskConfig t;
  t.name = name;
  return t;
}

TrainSection plain_training() {
  TrainSection t;
  t.lr = 1e-3;
  t.grad_clip = 0;  // the gradients as the losses make them
  return t;
}

std::vector<torch::Tensor> gradients(MultitaskModel& model) {
  std::vector<torch::Tensor> g;
  for (const auto& p : model->parameters())
    g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return g;
}

// The gradient one accumulate() of `batch` leaves, for a fresh copy of the
// model with `task`'s settings; the step's randomness drawn from `seed`.
std::vector<torch::Tensor> step_gradient(const TaskConfig& task, const TaskBatch& batch, uint64_t seed) {
  auto model = tiny_model();
  TrainStep step(model, {task, task_config(task.name == "sst" ? "para" : "sst")}, plain_training(), Precision::fp32,
                 torch::kCPU, /*total_steps=*/10);
  torch::manual_seed(seed);
  step.accumulate(task.name, batch);
  return gradients(model);
}

// max |a - b| over all tensors; with `base`, b is replaced by base + scale_b (b - base).
double max_difference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double scale_b = 1.0,
                      const std::vector<torch::Tensor>* base = nullptr) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    auto expected = base ? (*base)[i] + scale_b * (b[i] - (*base)[i]) : b[i];
    worst = std::max(worst, (a[i] - expected).abs().max().item<double>());
  }
  return worst;
}

}  // namespace

TEST_CASE("SMART in a training step adds lambda_s times its regularizer's gradient", "[train][smart][step]") {
  const auto batch = batch_of("sst", 1);
  const auto plain = step_gradient(task_config("sst"), batch, 5);
  for (SmartUpdate update : {SmartUpdate::projected, SmartUpdate::normalized}) {
    INFO((update == SmartUpdate::projected ? "projected" : "normalized"));
    TaskConfig smart = task_config("sst");
    smart.smart.enabled = true;
    smart.smart.update = update;
    smart.smart.noise_std = 0.01;
    smart.smart.radius = 0.05;
    smart.smart.weight = 1.0;
    const auto one = step_gradient(smart, batch, 5);
    smart.smart.weight = 2.5;
    const auto scaled = step_gradient(smart, batch, 5);
    // The regularizer matters ...
    CHECK(max_difference(one, plain) > 1e-6);
    // ... and the step's gradient is the loss's plus lambda_s times the
    // regularizer's, computed here by hand with the same random draws.
    auto model = tiny_model();
    torch::manual_seed(5);
    const auto embedded = model->embed("sst", batch.segments);
    const auto outputs = model->forward_embedded("sst", embedded, batch.segments);
    smart.smart.weight = 1.0;
    (model->head("sst")->loss(outputs, batch.labels) +
     smart_regularizer(model, "sst", batch.segments, embedded, outputs, smart.smart))
        .backward();
    CHECK(max_difference(one, gradients(model)) < 1e-6);
    // Linear in lambda_s: plain + 2.5 (one - plain).
    CHECK(max_difference(scaled, one, 2.5, &plain) < 1e-6);
  }
}

TEST_CASE("SiFT in a training step adds its weight times its regularizer's gradient", "[train][smart][step]") {
  const auto batch = batch_of("para", 2);
  const auto plain = step_gradient(task_config("para"), batch, 6);
  TaskConfig sift = task_config("para");
  sift.sift.enabled = true;
  sift.sift.step_size = 0.01;
  sift.sift.weight = 1.0;
  const auto one = step_gradient(sift, batch, 6);
  sift.sift.weight = 3.0;  // DeBERTa's
  const auto three = step_gradient(sift, batch, 6);
  CHECK(max_difference(one, plain) > 1e-7);
  CHECK(max_difference(three, one, 3.0, &plain) < 1e-6);
}

TEST_CASE("the Bregman teacher starts as the model and moves by the scheduled momentum", "[train][smart][step]") {
  auto model = tiny_model();
  TaskConfig task = task_config("sst");
  task.smart.enabled = true;
  task.smart.weight = 0;  // the Bregman term alone
  task.smart.bregman = true;
  task.smart.bregman_weight = 2.0;
  TrainStep step(model, {task}, plain_training(), Precision::fp32, torch::kCPU, /*total_steps=*/10);
  REQUIRE(step.teacher_module());
  auto teacher_params = [&] {
    std::vector<torch::Tensor> p;
    for (const auto& t : step.teacher_module()->parameters()) p.push_back(t.detach().clone());
    return p;
  };
  auto model_params = [&] {
    std::vector<torch::Tensor> p;
    for (const auto& t : model->parameters()) p.push_back(t.detach().clone());
    return p;
  };
  const auto theta0 = model_params();
  CHECK(max_difference(teacher_params(), theta0) == 0.0);

  // Step 0: teacher and student agree, so the term's gradient is zero.
  const auto batch = batch_of("sst", 3);
  step.accumulate("sst", batch);
  auto plain_model = tiny_model();
  plain_model->head("sst")->loss(plain_model->forward("sst", batch.segments), batch.labels).backward();
  CHECK(max_difference(gradients(model), gradients(plain_model)) < 1e-7);
  std::mt19937_64 rng(0);
  step.apply(1.0, 0, rng);
  // beta = 0.99 in the first 10% of the 10 steps.
  const auto theta1 = model_params();
  std::vector<torch::Tensor> expected;
  for (size_t i = 0; i < theta0.size(); ++i) expected.push_back(0.99 * theta0[i] + 0.01 * theta1[i]);
  CHECK(max_difference(teacher_params(), expected) < 1e-7);
  CHECK(max_difference(teacher_params(), theta0) > 0);

  // Step 1: the term pulls the student toward the teacher, mu times its divergence's gradient.
  const auto teacher1 = teacher_params();
  step.accumulate("sst", batch);
  const auto with_term = gradients(model);
  auto student = tiny_model();
  auto teacher = tiny_model();
  {
    torch::NoGradGuard no_grad;
    auto s = student->parameters(), t = teacher->parameters();
    for (size_t i = 0; i < s.size(); ++i) {
      s[i].copy_(theta1[i]);
      t[i].copy_(teacher1[i]);
    }
  }
  auto outputs = student->forward("sst", batch.segments);
  torch::Tensor target;
  {
    torch::NoGradGuard no_grad;
    target = teacher->forward("sst", batch.segments);
  }
  (student->head("sst")->loss(outputs, batch.labels) + 2.0 * student->head("sst")->divergence(outputs, target))
      .backward();
  CHECK(max_difference(with_term, gradients(student)) < 1e-6);
  step.apply(1.0, 1, rng);
  // beta = 0.999 from step 1 on (10% of 10 steps).
  const auto theta2 = model_params();
  expected.clear();
  for (size_t i = 0; i < theta0.size(); ++i) expected.push_back(0.999 * teacher1[i] + 0.001 * theta2[i]);
  CHECK(max_difference(teacher_params(), expected) < 1e-7);
}

TEST_CASE("PCGrad in a training step hands AdamW the projected sum of the task gradients", "[train][step][pcgrad]") {
  auto model = tiny_model();
  TrainSection train = plain_training();
  train.pcgrad.enabled = true;
  train.pcgrad.reduction = PcgradReduction::sum;
  TrainStep step(model, {task_config("sst"), task_config("para")}, train, Precision::fp32, torch::kCPU, 10);
  const auto sst = batch_of("sst", 4), para = batch_of("para", 5);

  // Each task's gradient by hand, on a copy.
  auto copy = tiny_model();
  copy->head("sst")->loss(copy->forward("sst", sst.segments), sst.labels).backward();
  const auto g_sst = gradients(copy);
  copy->zero_grad();
  copy->head("para")->loss(copy->forward("para", para.segments), para.labels).backward();
  const auto g_para = gradients(copy);

  step.accumulate("sst", sst);
  step.accumulate("para", para);
  std::mt19937_64 rng(0);
  step.apply(1.0, 0, rng);

  // On the shared encoder: g_i - min(g_i . g_j, 0) / |g_j|^2 g_j, summed; the
  // dot products over all shared parameters at once.
  auto named = model->named_parameters();
  double dot = 0, sst_sq = 0, para_sq = 0;
  std::vector<bool> shared;
  size_t i = 0;
  for (const auto& p : named) {
    shared.push_back(is_encoder_parameter(p.key()));
    if (shared.back()) {
      dot += (g_sst[i] * g_para[i]).sum().item<double>();
      sst_sq += g_sst[i].pow(2).sum().item<double>();
      para_sq += g_para[i].pow(2).sum().item<double>();
    }
    ++i;
  }
  INFO("g_sst . g_para = " << dot);
  const double c_sst = std::min(dot, 0.0) / para_sq, c_para = std::min(dot, 0.0) / sst_sq;
  // AdamW's first step keeps exp_avg = (1 - beta1) g of the gradient it was handed.
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(step.optimizer().defaults());
  const double beta1 = std::get<0>(options.betas());
  auto& state = step.optimizer().state();
  i = 0;
  double worst = 0;
  for (const auto& p : named) {
    auto g = shared[i] ? (g_sst[i] - c_sst * g_para[i]) + (g_para[i] - c_para * g_sst[i]) : g_sst[i] + g_para[i];
    const auto key = compat::optimizer_state_key(state, p.value());
    if (state.count(key)) {
      auto& s = static_cast<torch::optim::AdamWParamState&>(*state.at(key));
      worst = std::max(worst, (s.exp_avg() / (1 - beta1) - g).abs().max().item<double>());
    }
    ++i;
  }
  CHECK(worst < 1e-6);
}

// In double precision the two agree to 1e-10 of each gradient's scale: the
// same arithmetic up to the order of sums. In float32 that order moves
// gradients by up to ~3e-5 of their scale here (small tiny-model gradients that
// cancel), so float32 is held to 1e-4.
TEST_CASE("one encoder pass over a step's tasks gives the per-task passes' losses and gradients, every head and PAL kind",
          "[train][step][join]") {
  const auto heads = mtbert::test::every_head_kind();
  std::vector<TaskConfig> tasks;
  for (const auto& h : heads) tasks.push_back(task_config(h.task));
  tasks[1].loss_weight = 0.5;
  tasks[4].loss_weight = 2.0;
  PalConfig pals;
  pals.rank = 4;
  pals.heads = 2;
  for (const auto dtype : {torch::kDouble, torch::kFloat}) {
    auto batches = mtbert::test::batch_per_head(heads, 31, /*close_lengths=*/true);  // one joint pass on a CPU
    batches[2].global_size = 3 * batches[2].size();  // a data-parallel shard: a third of its global batch
    for (auto& b : batches) b.labels = b.labels.to(dtype);
    const double tolerance = dtype == torch::kDouble ? 1e-10 : 1e-4;
    for (const PalKind kind : {PalKind::none, PalKind::parallel, PalKind::top}) {
      pals.kind = kind;
      INFO("PALs " << static_cast<int>(kind) << ", " << (dtype == torch::kDouble ? "double" : "float"));
      struct Result {
        std::vector<torch::Tensor> gradients;
        nlohmann::json losses;
      };
      const auto run = [&](bool join) {
        torch::manual_seed(8);
        MultitaskModel model(tiny_encoder(tiny_config()), heads, pals);
        model->to(dtype);
        model->eval();
        TrainSection train = plain_training();
        train.join_tasks = join;
        train.grad_accumulation = 2;
        TrainStep step(model, tasks, train, Precision::fp32, torch::kCPU, 10);
        step.accumulate(batches);
        return Result{gradients(model), step.losses().mean_json()};
      };
      const auto joined = run(true), alone = run(false);
      for (size_t i = 0; i < joined.gradients.size(); ++i) {
        const double scale = std::max(alone.gradients[i].abs().max().item<double>(), 1e-2);
        INFO("parameter " << i << ", largest |gradient| " << scale);
        CHECK((joined.gradients[i] - alone.gradients[i]).abs().max().item<double>() <= tolerance * scale);
      }
      for (const auto& h : heads) {
        INFO(h.task);
        CHECK(joined.losses.at(h.task).get<double>() == Approx(alone.losses.at(h.task).get<double>()).epsilon(tolerance));
      }
    }
  }
}

TEST_CASE("the step says which tasks share a pass and why the others run alone", "[train][step][join]") {
  auto model = tiny_model();
  auto smart = task_config("sst");
  smart.smart.enabled = true;
  {
    TrainStep step(model, {task_config("sst"), task_config("para")}, plain_training(), Precision::fp32, torch::kCPU, 10);
    CHECK(step.pass_plan() == "tasks sst, para share one encoder pass and one backward per step where their "
                              "batches' lengths are close (at most 10% more tokens padded)");
  }
  {
    auto model3 = tiny_model();
    TrainStep step(model3, {smart, task_config("para")}, plain_training(), Precision::fp32, torch::kCPU, 10);
    CHECK(step.pass_plan() ==
          "one encoder pass and one backward per task: sst (SMART perturbs its own embeddings)");
  }
  {
    auto sts = task_config("sts");
    MultitaskModel three(tiny_encoder(tiny_config(2)),
                         std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3),
                                               head_spec("para", TaskTarget::binary, 0, PairMode::cross),
                                               head_spec("sts", TaskTarget::regression, 0, PairMode::cross)});
    TrainStep step(three, {smart, task_config("para"), sts}, plain_training(), Precision::fp32, torch::kCPU, 10);
    CHECK(step.pass_plan() == "tasks para, sts share one encoder pass and one backward per step where their "
                              "batches' lengths are close (at most 10% more tokens padded); their own pass: "
                              "sst (SMART perturbs its own embeddings)");
  }
  TrainSection pcgrad = plain_training();
  pcgrad.pcgrad.enabled = true;
  TrainStep step(model, {task_config("sst"), task_config("para")}, pcgrad, Precision::fp32, torch::kCPU, 10);
  CHECK(step.pass_plan() == "one encoder pass and one backward per task: PCGrad needs each task's own gradient");
}

// AdamW moves a parameter with a zero gradient (its momentum, its decay):
// the head of a task a step did not sample must have none when AdamW runs,
// however the step keeps its gradients between steps.
TEST_CASE("a step leaves the head of a task it did not sample where it was", "[train][step]") {
  auto model = tiny_model();
  TrainSection train = plain_training();
  train.weight_decay = 0.1;
  TrainStep step(model, {task_config("sst"), task_config("para")}, train, Precision::fp32, torch::kCPU, 10);
  std::mt19937_64 rng(0);
  step.accumulate({batch_of("sst", 1), batch_of("para", 2)});  // both heads get momentum
  step.apply(1.0, 0, rng);
  std::vector<torch::Tensor> para_head;
  for (const auto& p : model->task_parameters("para")) para_head.push_back(p.detach().clone());
  for (int k = 1; k < 3; ++k) {
    step.accumulate("sst", batch_of("sst", 2 + k));
    step.apply(1.0, k, rng);
  }
  const auto after = model->task_parameters("para");
  REQUIRE(after.size() == para_head.size());
  for (size_t i = 0; i < after.size(); ++i) CHECK(torch::equal(after[i], para_head[i]));
  step.optimizer().sync_state_steps();
  const auto& state = step.optimizer().state();
  CHECK(static_cast<const torch::optim::AdamWParamState&>(
            *state.at(compat::optimizer_state_key(state, after.front()))).step() == 1);
  CHECK(static_cast<const torch::optim::AdamWParamState&>(
            *state.at(compat::optimizer_state_key(state, model->task_parameters("sst").front()))).step() == 3);
}

// What a CUDA graph could not capture and what would stall a GPU's queue:
// operators that hand a tensor's value to the host.
TEST_CASE("a training step reads no tensor value on the host: one pass, bf16, PALs, DeBERTa, clipping",
          "[train][step][join]") {
  const auto heads = mtbert::test::every_head_kind();
  std::vector<TaskConfig> tasks;
  for (const auto& h : heads) tasks.push_back(task_config(h.task));
  const auto batches = mtbert::test::batch_per_head(heads, 12, /*close_lengths=*/true);
  struct Setting {
    const char* name;
    Precision precision;
    PalKind pals;
    bool deberta;
  };
  for (const Setting& setting : {Setting{"fp32", Precision::fp32, PalKind::none, false},
                                 Setting{"bf16", Precision::bf16, PalKind::none, false},
                                 Setting{"parallel PALs", Precision::fp32, PalKind::parallel, false},
                                 Setting{"top PAL", Precision::fp32, PalKind::top, false},
                                 Setting{"DeBERTa", Precision::fp32, PalKind::none, true}}) {
    INFO(setting.name);
    ModelConfig config = tiny_config();
    if (setting.deberta) use_deberta_v3_attention(config, {"c2p", "p2c"});
    PalConfig pals;
    pals.kind = setting.pals;
    pals.rank = 4;
    pals.heads = 2;
    torch::manual_seed(3);
    MultitaskModel model(tiny_encoder(config), heads, pals);
    model->train();
    TrainSection train = plain_training();
    train.grad_clip = 1.0;
    TrainStep step(model, tasks, train, setting.precision, torch::kCPU, 10);
    std::mt19937_64 rng(0);
    const auto one_step = [&] {
      step.accumulate(batches);
      step.apply(1.0, 0, rng);
    };
    one_step();  // per-length tables (DeBERTa's relative positions) are made once, before
    const auto ops = profile_ops(one_step, 2);
    for (const auto& op : ops) {
      INFO(op.op);
      CHECK(op.op != "aten::_local_scalar_dense");  // item(), is_nonzero(), a bool of a tensor
      CHECK(op.op != "aten::item");
      CHECK(op.op != "aten::is_nonzero");
      CHECK(op.op != "aten::nonzero");
      CHECK(op.op != "aten::equal");
    }
  }
}
