// SMART, SiFT and the momentum teacher on tiny models: zero perturbation gives
// zero, larger perturbations a larger regularizer, gradients reach the encoder
// but never the perturbation, both ascent updates checked in closed form on
// linear models (regression and classification), and the EMA update and its
// schedule exactly.
#include <torch/torch.h>

#include "models/multitask_model.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"
#include "train/smart.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

MultitaskModel tiny_model(int64_t layers = 2) {
  torch::manual_seed(31);
  MultitaskModel model(tiny_encoder(tiny_config(layers)),
                       std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3),
                        head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::concat,
                                  Pooling::mean)});
  model->eval();  // deterministic passes: no dropout
  return model;
}

struct Batch {
  std::string task;
  std::vector<TokenBatch> segments;
};

std::vector<Batch> batches() {
  torch::manual_seed(32);
  return {{"sst", {tiny_batch(4, 7)}}, {"sts", {tiny_batch(3, 6), tiny_batch(3, 5)}}};
}

double smart_value(MultitaskModel& model, const Batch& b, const SmartConfig& config, uint64_t seed = 7) {
  torch::manual_seed(seed);
  auto embedded = model->embed(b.task, b.segments);
  auto clean = model->forward_embedded(b.task, embedded, b.segments);
  return smart_regularizer(model, b.task, b.segments, embedded, clean, config).item<double>();
}

double sift_value(MultitaskModel& model, const Batch& b, const SiftConfig& config, uint64_t seed = 7) {
  torch::manual_seed(seed);
  auto clean = model->forward(b.task, b.segments);
  return sift_regularizer(model, b.task, b.segments, clean, config).item<double>();
}

std::vector<torch::Tensor> encoder_grads(MultitaskModel& model) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
  return grads;
}

}  // namespace

TEST_CASE("SMART and SiFT: zero perturbation gives a zero regularizer", "[train][smart]") {
  auto model = tiny_model();
  SmartConfig smart;
  smart.noise_std = 0;
  smart.step_size = 0;
  SiftConfig sift;
  sift.noise_std = 0;
  sift.step_size = 0;
  for (const auto& b : batches()) {
    INFO(b.task);
    CHECK(smart_value(model, b, smart) == 0.0);
    CHECK(sift_value(model, b, sift) == 0.0);
    // Without noise the ascent starts at the minimum, where the gradient is
    // zero: any step size leaves delta at zero.
    smart.step_size = 0.5;
    smart.steps = 3;
    sift.step_size = 0.5;
    for (SmartUpdate update : {SmartUpdate::projected, SmartUpdate::normalized}) {
      smart.update = update;
      CHECK(smart_value(model, b, smart) == 0.0);
    }
    CHECK(sift_value(model, b, sift) == 0.0);
  }
}

TEST_CASE("SMART and SiFT regularizers grow with the perturbation size", "[train][smart]") {
  auto model = tiny_model();
  for (const auto& b : batches()) {
    INFO(b.task);
    SmartConfig smart;  // sigma = 1e-5, K = 1, projected
    smart.radius = 10;  // a ball the steps do not reach
    SiftConfig sift;
    double previous_smart = 0, previous_sift = 0;
    for (double eta : {1e-3, 1e-2, 1e-1}) {
      smart.step_size = eta;
      sift.step_size = eta;
      const double s = smart_value(model, b, smart);
      const double f = sift_value(model, b, sift);
      INFO("eta " << eta << ": SMART " << s << ", SiFT " << f);
      CHECK(s > previous_smart);
      CHECK(f > previous_sift);
      previous_smart = s;
      previous_sift = f;
    }
    // A large step projected onto balls of growing radius.
    smart.step_size = 1.0;
    smart.steps = 2;
    double previous = 0;
    for (double radius : {1e-3, 1e-2, 1e-1}) {
      smart.radius = radius;
      const double s = smart_value(model, b, smart);
      INFO("radius " << radius << ": SMART " << s);
      CHECK(s > previous);
      previous = s;
      torch::manual_seed(7);
      auto embedded = model->embed(b.task, b.segments);
      auto clean = model->forward_embedded(b.task, embedded, b.segments);
      for (const auto& delta : smart_perturbation(model, b.task, b.segments, embedded, clean, smart))
        CHECK(delta.abs().max().item<double>() <= radius * (1 + 1e-6));  // radius as a float
    }
  }
}

TEST_CASE("SMART and SiFT gradients reach the encoder, never the perturbation", "[train][smart]") {
  auto model = tiny_model();
  SmartConfig smart;
  smart.step_size = 0.05;
  smart.steps = 2;
  SiftConfig sift;
  sift.step_size = 0.05;
  for (const auto& b : batches()) {
    INFO(b.task);
    // SMART's regularizer alone.
    model->zero_grad();
    torch::manual_seed(3);
    auto embedded = model->embed(b.task, b.segments);
    auto clean = model->forward_embedded(b.task, embedded, b.segments);
    smart_regularizer(model, b.task, b.segments, embedded, clean, smart).backward();
    for (const auto& p : model->bert->named_parameters()) {
      if (p.key().rfind("pooler.", 0) == 0) continue;  // no head here pools with the pooler
      INFO(p.key());
      REQUIRE(p.value().grad().defined());
      CHECK(p.value().grad().abs().max().item<double>() > 0);
    }
    auto smart_grads = encoder_grads(model);

    // The same loss built from the (detached) perturbation smart_perturbation
    // returns under the same seed: identical gradients, so none flowed
    // through delta.
    model->zero_grad();
    torch::manual_seed(3);
    embedded = model->embed(b.task, b.segments);
    clean = model->forward_embedded(b.task, embedded, b.segments);
    auto delta = smart_perturbation(model, b.task, b.segments, embedded, clean, smart);
    std::vector<torch::Tensor> perturbed;
    for (size_t s = 0; s < delta.size(); ++s) {
      CHECK(!delta[s].requires_grad());
      perturbed.push_back(embedded[s] + delta[s]);
    }
    (smart.weight * model->head(b.task)->divergence(model->forward_embedded(b.task, perturbed, b.segments), clean))
        .backward();
    auto constant_delta_grads = encoder_grads(model);
    for (size_t i = 0; i < smart_grads.size(); ++i) {
      if (!smart_grads[i].defined()) continue;
      CHECK(torch::allclose(smart_grads[i], constant_delta_grads[i], 1e-5, 1e-7));
    }

    // SiFT: the word embeddings and the layers get gradient.
    model->zero_grad();
    torch::manual_seed(3);
    clean = model->forward(b.task, b.segments);
    sift_regularizer(model, b.task, b.segments, clean, sift).backward();
    CHECK(model->bert->embeddings->word_embeddings->weight.grad().abs().max().item<double>() > 0);
    CHECK(model->bert->encoder->named_parameters()["layer.0.attention.self.query.weight"].grad().abs().max()
              .item<double>() > 0);
    torch::manual_seed(3);
    for (const auto& d : sift_perturbation(model, b.task, b.segments, clean.detach(), sift)) CHECK(!d.requires_grad());
  }
}

TEST_CASE("SMART's ascent step on a linear model, in closed form", "[train][smart]") {
  // No layers, cls pooling, a regression head: f(e + delta) = w . (e_0 + delta_0) + c
  // for each row, linear in the first token's embedding output. With the
  // squared error as divergence, the ascent objective (batch sum) is
  //   L = sum_b (w . delta_b0)^2,   dL/d delta_b0 = 2 (w . delta_b0) w = 2 r_b w,
  // and zero for every other token. One step:
  //   delta_b0 += eta * 2 r_b w / (max_h |2 r_b w_h| + epsilon)
  //            =  eta * 2 r_b w / (2 |r_b| max|w| + epsilon).
  torch::manual_seed(41);
  MultitaskModel model(tiny_encoder(tiny_config(/*layers=*/0)), std::vector<HeadSpec>{head_spec("lin", TaskTarget::regression)});
  model->eval();
  torch::manual_seed(42);
  std::vector<TokenBatch> segments = {tiny_batch(3, 5)};
  auto embedded = model->embed("lin", segments);
  auto clean = model->forward_embedded("lin", embedded, segments);

  SmartConfig config;
  config.noise_std = 0.01;
  config.step_size = 0.1;
  config.epsilon = 1e-6;
  config.steps = 1;
  torch::manual_seed(43);
  auto delta = smart_perturbation(model, "lin", segments, embedded, clean, config)[0];
  torch::manual_seed(43);
  auto noise = torch::randn_like(embedded[0]) * config.noise_std;  // the same draw

  auto w = model->head("lin")->classifier->weight.detach()[0];  // [H]
  auto noise0 = noise.select(1, 0);                             // [B, H]
  auto r = noise0.matmul(w);                                    // [B]
  auto step = config.step_size * 2 * r.unsqueeze(1) * w /
              (2 * r.abs().unsqueeze(1) * w.abs().max() + config.epsilon);
  auto expected = noise.clone();
  expected.select(1, 0).add_(step);
  // Projected: with a ball the step stays inside, the step itself ...
  config.radius = 1.0;
  torch::manual_seed(43);
  delta = smart_perturbation(model, "lin", segments, embedded, clean, config)[0];
  CHECK(torch::allclose(delta, expected, 1e-5, 1e-9));
  // ... and with a small ball, its clamp.
  config.radius = 0.03;
  torch::manual_seed(43);
  auto projected = smart_perturbation(model, "lin", segments, embedded, clean, config)[0];
  CHECK(torch::allclose(projected, expected.clamp(-0.03, 0.03), 1e-5, 1e-9));
  // Normalized (the public code): (noise + eta g) / (max_h |noise + eta g| + epsilon), per token.
  config.update = SmartUpdate::normalized;
  torch::manual_seed(43);
  auto normalized = smart_perturbation(model, "lin", segments, embedded, clean, config)[0];
  auto climbed = noise.clone();
  climbed.select(1, 0).add_(config.step_size * 2 * r.unsqueeze(1) * w);
  // Values of order 1 in float32: an absolute tolerance of a few ulps.
  CHECK(torch::allclose(normalized, climbed / (climbed.abs().amax(-1, true) + config.epsilon), 1e-5, 1e-6));
  CHECK(normalized.abs().amax(-1).min().item<double>() > 0.999);  // every token at l_inf ~1
  config.update = SmartUpdate::projected;
  config.radius = 1.0;
  // Each first token moved by eta m / (m + epsilon), m = max|g| (here about
  // 1e-3, so just under eta) in the l_inf norm; the rest not at all.
  auto moved = (delta - noise).abs().amax(-1);  // [B, N]
  CHECK(moved.select(1, 0).max().item<double>() <= config.step_size);
  CHECK(moved.select(1, 0).min().item<double>() > 0.99 * config.step_size);
  CHECK(moved.narrow(1, 1, 4).max().item<double>() == 0.0);

  // epsilon guards the division: a gradient far below it gives a step far below eta.
  config.epsilon = 1e3;
  torch::manual_seed(43);
  auto damped = smart_perturbation(model, "lin", segments, embedded, clean, config)[0];
  CHECK((damped - noise).abs().max().item<double>() < 1e-3 * config.step_size);
}

TEST_CASE("SMART's ascent step for classification matches the symmetric KL's closed-form gradient",
          "[train][smart]") {
  // No layers, cls pooling, a 3-class head: the logits are z' = W (e_0 +
  // delta_0) + c, linear in the first token's embedding output. With
  // l = log p' - log p (p' = softmax(z'), p = softmax(z) the clean ones),
  // d/dz' of KL(p'||p) + KL(p||p') is p' * (l - <p', l>) + p' - p, so the
  // ascent gradient of the batch sum is g_b0 = W^T (that), zero elsewhere.
  torch::manual_seed(61);
  MultitaskModel model(tiny_encoder(tiny_config(/*layers=*/0)),
                       std::vector<HeadSpec>{head_spec("cls3", TaskTarget::classes, 3)});
  model->eval();
  torch::manual_seed(62);
  std::vector<TokenBatch> segments = {tiny_batch(4, 6)};
  auto embedded = model->embed("cls3", segments);
  auto clean = model->forward_embedded("cls3", embedded, segments);
  SmartConfig config;
  config.noise_std = 0.05;
  config.step_size = 0.01;
  config.radius = 1.0;
  torch::manual_seed(63);
  auto noise = torch::randn_like(embedded[0]) * config.noise_std;

  torch::NoGradGuard no_grad;
  auto W = model->head("cls3")->classifier->weight.detach().to(torch::kDouble);  // [3, H]
  auto z = clean.detach().to(torch::kDouble);
  auto z_perturbed = z + noise.select(1, 0).to(torch::kDouble).matmul(W.t());
  auto p = torch::softmax(z, -1), q = torch::softmax(z_perturbed, -1);
  auto l = q.log() - p.log();
  auto dz = q * (l - (q * l).sum(-1, true)) + q - p;
  auto g0 = dz.matmul(W);  // [B, H]
  auto g = torch::zeros_like(noise, torch::kDouble);
  g.select(1, 0).copy_(g0);

  for (SmartUpdate update : {SmartUpdate::projected, SmartUpdate::normalized}) {
    config.update = update;
    INFO((update == SmartUpdate::projected ? "projected" : "normalized"));
    torch::AutoGradMode enable(true);  // smart_perturbation takes gradients itself
    torch::manual_seed(63);
    auto delta = smart_perturbation(model, "cls3", segments, embedded, clean, config)[0];
    auto expected = smart_ascent_update(noise.to(torch::kDouble), g, config);
    CHECK(torch::allclose(delta.to(torch::kDouble), expected, 1e-4, 1e-7));
  }
}

TEST_CASE("SiFT perturbs the normalized embedding sum, one step normalized per token", "[train][smart]") {
  torch::manual_seed(51);
  MultitaskModel model(tiny_encoder(tiny_config(/*layers=*/0)), std::vector<HeadSpec>{head_spec("sst", TaskTarget::classes, 3)});
  model->eval();
  torch::manual_seed(52);
  std::vector<TokenBatch> segments = {tiny_batch(3, 5)};
  auto clean = model->forward("sst", segments);
  SiftConfig config;  // DeBERTa's: sigma 1e-2, eta 1e-4, weight 3
  CHECK(config.noise_std == 1e-2);
  CHECK(config.step_size == 1e-4);
  CHECK(config.weight == 3.0);
  config.step_size = 0.1;
  torch::manual_seed(53);
  auto delta = sift_perturbation(model, "sst", segments, clean, config)[0];
  auto sums = model->embedding_sums("sst", segments)[0].detach();
  torch::manual_seed(53);
  auto noise = (torch::randn_like(sums) * config.noise_std).clamp(-2 * config.noise_std, 2 * config.noise_std);

  // A LayerNorm sees the perturbed sum as it sees DeBERTa's LN0(x) + delta
  // (LN0: no affine, DeBERTa's eps 1e-7): LayerNorm ignores shift and scale.
  const int64_t H = sums.size(-1);
  auto ln0 = [&](const torch::Tensor& x) { return torch::layer_norm(x, {H}, {}, {}, kSiftLayerNormEps); };
  CHECK(torch::allclose(ln0(sift_perturbed_sum(sums, delta)), ln0(ln0(sums) + delta), 1e-4, 1e-5));
  // With no layers only the first token reaches the head: it moves by just
  // under eta in the l_inf norm, the others keep their noise.
  auto moved = (delta - noise).abs().amax(-1);
  CHECK(moved.select(1, 0).max().item<double>() <= config.step_size);
  CHECK(moved.select(1, 0).min().item<double>() > 0.99 * config.step_size);
  CHECK(moved.narrow(1, 1, 4).max().item<double>() == 0.0);
  // The step climbs the divergence.
  // What the model is fed: x + s delta, s each token's standard deviation,
  // which the embedding LayerNorm normalizes to LN0(x) + delta.
  auto scale = (sums.var(-1, false, true) + kSiftLayerNormEps).sqrt();
  auto divergence_at = [&](const torch::Tensor& d) {
    torch::NoGradGuard no_grad;
    auto out = model->forward_from_embedding_sums("sst", {sift_perturbed_sum(sums, d)}, segments);
    CHECK(torch::allclose(sift_perturbed_sum(sums, d), sums + scale * d, 1e-5, 1e-6));
    return model->head("sst")->divergence(out, clean).item<double>();
  };
  CHECK(divergence_at(delta) > divergence_at(noise));
}

TEST_CASE("Bregman momentum: 0.99 for the first 10% of the steps, then 0.999", "[train][smart]") {
  SmartConfig config;
  CHECK(bregman_momentum(config, 0, 1000) == 0.99);
  CHECK(bregman_momentum(config, 99, 1000) == 0.99);
  CHECK(bregman_momentum(config, 100, 1000) == 0.999);
  CHECK(bregman_momentum(config, 999, 1000) == 0.999);
  config.late_momentum_after = 1.0;
  CHECK(bregman_momentum(config, 999, 1000) == 0.99);
}

TEST_CASE("MomentumTeacher: EMA update and Bregman term", "[train][smart]") {
  auto model = tiny_model();
  const double beta = 0.99;
  MomentumTeacher teacher(model);
  CHECK(!teacher.teacher()->is_training());
  for (const auto& p : teacher.teacher()->parameters()) CHECK(!p.requires_grad());

  // Right after creation the teacher is the model: a zero Bregman term.
  for (const auto& b : batches()) {
    auto student = model->forward(b.task, b.segments);
    CHECK(teacher.bregman_term(model, b.task, b.segments, student, 1.0).item<double>() == 0.0);
  }

  // One step of the student, then one update.
  std::vector<torch::Tensor> old_params;
  for (const auto& p : model->parameters()) old_params.push_back(p.detach().clone());
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * 0.1);
  }
  const auto b = batches()[0];
  auto student = model->forward(b.task, b.segments);
  const double before = teacher.bregman_term(model, b.task, b.segments, student, 1.0).item<double>();
  CHECK(before > 0);
  CHECK(teacher.bregman_term(model, b.task, b.segments, student, 3.0).item<double>() == Approx(3 * before));

  teacher.update(model, beta);
  auto teacher_params = teacher.teacher()->parameters();
  auto new_params = model->parameters();
  for (size_t i = 0; i < new_params.size(); ++i) {
    auto expected = old_params[i] * beta + new_params[i].detach() * (1 - beta);
    CHECK(torch::equal(teacher_params[i], expected));
    CHECK(!teacher_params[i].requires_grad());
  }
  // The teacher moved 1% of the way: the term shrinks, but is not zero.
  const double after = teacher.bregman_term(model, b.task, b.segments, student, 1.0).item<double>();
  CHECK(after < before);
  CHECK(after > 0);
  // Gradients flow into the student only.
  teacher.bregman_term(model, b.task, b.segments, student, 1.0).backward();
  CHECK(model->head("sst")->classifier->weight.grad().defined());
  for (const auto& p : teacher.teacher()->parameters()) CHECK(!p.grad().defined());
}
