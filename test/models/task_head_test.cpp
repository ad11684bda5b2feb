// Task heads: pooling, the head layouts, losses against formulas written out
// here (and a few values computed by hand), predictions, and the SMART
// divergences against their definitions and a finite-difference gradient check
// in double.
#include <cmath>

#include <torch/torch.h>

#include "config/experiment_config.h"
#include "core/user_error.h"
#include "models/task_head.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;
using mtbert::test::head_spec;

namespace {

double scalar(const torch::Tensor& t) { return t.item<double>(); }

TaskHead make_head(const HeadSpec& spec, int64_t hidden = 3) {
  TaskHead head(spec, hidden);
  head->eval();
  return head;
}

// Central finite differences of a scalar function of `x` (double), against
// autograd's gradient.
void check_gradient(const std::function<torch::Tensor(const torch::Tensor&)>& f, torch::Tensor x) {
  x = x.detach().clone().requires_grad_(true);
  auto analytic = torch::autograd::grad({f(x)}, {x})[0];
  auto flat = x.detach().clone().reshape({-1});
  const double h = 1e-6;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    auto plus = flat.clone();
    auto minus = flat.clone();
    plus[i] += h;
    minus[i] -= h;
    const double numeric = (scalar(f(plus.view_as(x))) - scalar(f(minus.view_as(x)))) / (2 * h);
    CHECK(analytic.reshape({-1})[i].item<double>() == Approx(numeric).margin(1e-8));
  }
}

}  // namespace

TEST_CASE("pool: first token, masked mean without padding, pooler output", "[models][heads]") {
  // hidden[b][n] = (10 b + n, -(10 b + n)); row 0 has 3 tokens, row 1 has 2 (one padded).
  auto hidden = torch::tensor({0., 0., 1., -1., 2., -2., 10., -10., 11., -11., 99., -99.}, torch::kDouble)
                    .view({2, 3, 2});
  auto mask = torch::tensor({1, 1, 1, 1, 1, 0}, torch::kLong).view({2, 3});
  EncoderOutput out;
  out.last_hidden_state = hidden;

  auto cls = pool(out, mask, Pooling::cls);
  CHECK(cls[0][0].item<double>() == 0.0);
  CHECK(cls[1][0].item<double>() == 10.0);

  // Row 0: (0 + 1 + 2) / 3 = 1; row 1: (10 + 11) / 2 = 10.5, the padded 99 left out.
  auto mean = pool(out, mask, Pooling::mean);
  CHECK(mean[0][0].item<double>() == Approx(1.0));
  CHECK(mean[0][1].item<double>() == Approx(-1.0));
  CHECK(mean[1][0].item<double>() == Approx(10.5));
  CHECK(mean[1][1].item<double>() == Approx(-10.5));

  CHECK_THROWS_AS(pool(out, mask, Pooling::pooler), UserError);
  out.pooler_output = torch::full({2, 2}, 7.0, torch::kDouble);
  CHECK(torch::equal(pool(out, mask, Pooling::pooler), out.pooler_output));
}

TEST_CASE("Head layouts: linear widths, siamese [u, v, |u-v|, u*v]", "[models][heads]") {
  const int64_t H = 3;
  auto single = make_head(head_spec("sst", TaskTarget::classes, 5), H);
  CHECK(single->classifier->weight.sizes() == torch::IntArrayRef({5, H}));
  auto binary = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross), H);
  CHECK(binary->classifier->weight.sizes() == torch::IntArrayRef({1, H}));

  auto siamese = make_head(head_spec("sts", TaskTarget::regression, 0, PairMode::siamese), H);
  REQUIRE(siamese->classifier->weight.sizes() == torch::IntArrayRef({1, 4 * H}));
  {
    torch::NoGradGuard no_grad;
    // Weight k = 10^(k / H) picks each block with its own power of ten.
    for (int64_t k = 0; k < 4 * H; ++k) siamese->classifier->weight[0][k] = std::pow(10.0, k / H);
    siamese->classifier->bias.fill_(0.5);
  }
  auto u = torch::tensor({{1.f, -2.f, 3.f}});
  auto v = torch::tensor({{2.f, 1.f, -1.f}});
  // u = (1, -2, 3), v = (2, 1, -1): sums 2, 2, |u-v| = (1, 3, 4) sums 8, u*v = (2, -2, -3) sums -3.
  // 1 * 2 + 10 * 2 + 100 * 8 + 1000 * (-3) + 0.5 = -2177.5
  auto y = siamese->forward({u, v});
  CHECK(y.sizes() == torch::IntArrayRef({1}));
  CHECK(y.item<double>() == Approx(-2177.5));

  auto cosine = make_head(head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::cosine), H);
  CHECK(!cosine->classifier);
  CHECK(cosine->parameters().empty());

  // [u, v] -> linear: 1 * (1 - 2 + 3) + 10 * (2 + 1 - 1) + 0.5 = 22.5.
  auto uv = make_head(head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::uv), H);
  REQUIRE(uv->classifier->weight.sizes() == torch::IntArrayRef({1, 2 * H}));
  {
    torch::NoGradGuard no_grad;
    for (int64_t k = 0; k < 2 * H; ++k) uv->classifier->weight[0][k] = std::pow(10.0, k / H);
    uv->classifier->bias.fill_(0.5);
  }
  CHECK(uv->forward({u, v}).item<double>() == Approx(22.5));
}

TEST_CASE("A sentence projection maps each sentence vector before the combination", "[models][heads]") {
  const int64_t H = 3;
  auto spec = head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::cosine);
  spec.sentence_projection = true;
  auto head = make_head(spec, H);
  REQUIRE(head->projection);
  CHECK(head->projection->weight.sizes() == torch::IntArrayRef({H, H}));
  auto u = torch::tensor({{1.f, -2.f, 3.f}}), v = torch::tensor({{2.f, 1.f, -1.f}});
  auto pu = head->projection(u), pv = head->projection(v);
  CHECK(torch::allclose(head->forward({u, v}), 5 * torch::cosine_similarity(pu, pv, 1)));
  // Only siamese pairs have two sentences to project.
  auto cross = head_spec("para", TaskTarget::binary, 0, PairMode::cross);
  cross.sentence_projection = true;
  CHECK_THROWS_WITH(validate_head_spec(cross, true), Catch::Matchers::ContainsSubstring("tasks.para.sentence_projection"));
}

TEST_CASE("Cosine maps: 5 cos, 5 ReLU(cos), 2.5 (cos + 1), probabilities in [0, 1]", "[models][heads]") {
  auto u = torch::tensor({{1., 2., 0.}, {1., 2., 0.}, {1., 0., 0.}, {3., 4., 0.}}, torch::kDouble);
  // same direction (cos 1), opposite (-1), orthogonal (0), cos = 3/5 = 0.6.
  auto v = torch::tensor({{2., 4., 0.}, {-1., -2., 0.}, {0., 5., 0.}, {1., 0., 0.}}, torch::kDouble);
  struct Expected {
    CosineMap map;
    std::vector<double> score, probability;
  };
  for (const auto& e : std::vector<Expected>{{CosineMap::scaled, {5, -5, 0, 3}, {1, 0, 0, 0.6}},
                                             {CosineMap::relu, {5, 0, 0, 3}, {1, 0, 0, 0.6}},
                                             {CosineMap::shifted, {5, 0, 2.5, 4}, {1, 0, 0.5, 0.8}}}) {
    INFO(enum_name(e.map));
    auto sts_spec = head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::cosine);
    auto para_spec = head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine);
    sts_spec.cosine_map = para_spec.cosine_map = e.map;
    auto score = make_head(sts_spec)->forward({u, v});
    auto prob = make_head(para_spec)->forward({u, v});
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(score[i].item<double>() == Approx(e.score[i]).margin(1e-12));
      CHECK(prob[i].item<double>() == Approx(e.probability[i]).margin(1e-12));
    }
  }
}

TEST_CASE("Losses by hand", "[models][heads]") {
  auto sst = make_head(head_spec("sst", TaskTarget::classes, 2));
  // logits (0, ln 3): softmax (1/4, 3/4). Label 1: -ln(3/4); label 0: -ln(1/4) = ln 4.
  auto logits = torch::tensor({{0.0, std::log(3.0)}}, torch::kDouble);
  CHECK(scalar(sst->loss(logits, torch::tensor({1.0}))) == Approx(0.2876820724517809));
  CHECK(scalar(sst->loss(logits, torch::tensor({0.0}))) == Approx(1.3862943611198906));

  auto para = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross));
  // logit 0 is probability 1/2: ln 2 for either label.
  CHECK(scalar(para->loss(torch::tensor({0.0}, torch::kDouble), torch::tensor({1.0}))) == Approx(std::log(2.0)));

  auto cosine = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine));
  // Probabilities 0 and 1 are clamped to 1e-6 and 1 - 1e-6: -ln(1e-6) = 13.8155...,
  // -ln(1 - 1e-6) = 1.0000005e-6; mean of (13.8155..., 1.0000005e-6, ln 2).
  auto probs = torch::tensor({0.0, 1.0, 0.5}, torch::kDouble);
  auto labels = torch::tensor({1.0, 1.0, 0.0});
  const double expected = (13.815510557964274 + 1.0000005000003334e-06 + std::log(2.0)) / 3;
  CHECK(scalar(cosine->loss(probs, labels)) == Approx(expected));

  auto sts = make_head(head_spec("sts", TaskTarget::regression));
  // ((1 - 0)^2 + (2 - 4)^2) / 2 = 2.5
  CHECK(scalar(sts->loss(torch::tensor({1.0, 2.0}, torch::kDouble), torch::tensor({0.0, 4.0}))) == Approx(2.5));
}

TEST_CASE("Losses match their formulas on random batches", "[models][heads]") {
  torch::manual_seed(3);
  const int64_t B = 7;
  auto logits = torch::randn({B, 5}, torch::kDouble) * 3;
  auto classes = torch::randint(0, 5, {B}).to(torch::kFloat);
  auto z = torch::randn({B}, torch::kDouble) * 2;
  auto y01 = torch::randint(0, 2, {B}).to(torch::kFloat);
  auto p = torch::rand({B}, torch::kDouble);
  auto scores = torch::rand({B}, torch::kDouble) * 5;
  auto targets = torch::rand({B}) * 5;

  // Cross-entropy: mean of logsumexp(z) - z_label.
  auto ce = (torch::logsumexp(logits, 1) - logits.gather(1, classes.to(torch::kLong).unsqueeze(1)).squeeze(1)).mean();
  CHECK(scalar(make_head(head_spec("sst", TaskTarget::classes, 5))->loss(logits, classes)) == Approx(scalar(ce)));

  // BCE with logits: mean of softplus(z) - y z.
  auto y = y01.to(torch::kDouble);
  auto bce_logits = (torch::log1p(torch::exp(z)) - y * z).mean();
  CHECK(scalar(make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross))->loss(z, y01)) ==
        Approx(scalar(bce_logits)));

  // BCE on probabilities inside (eps, 1 - eps): mean of -(y ln p + (1 - y) ln(1 - p)).
  auto bce = (-(y * p.log() + (1 - y) * (1 - p).log())).mean();
  auto cosine = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine));
  CHECK(scalar(cosine->loss(p, y01)) == Approx(scalar(bce)));

  auto mse = (scores - targets.to(torch::kDouble)).pow(2).mean();
  CHECK(scalar(make_head(head_spec("sts", TaskTarget::regression))->loss(scores, targets)) == Approx(scalar(mse)));
}

TEST_CASE("Predictions: argmax, logit > 0, probability > 0.5, score", "[models][heads]") {
  auto sst = make_head(head_spec("sst", TaskTarget::classes, 3));
  auto c = sst->predictions(torch::tensor({{0.1, 2.0, -1.0}, {5.0, 0.0, 4.9}}));
  CHECK(c.scalar_type() == torch::kDouble);
  CHECK(torch::equal(c, torch::tensor({1.0, 0.0}, torch::kDouble)));

  auto para = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross));
  CHECK(torch::equal(para->predictions(torch::tensor({-0.1, 0.2, 0.0})), torch::tensor({0.0, 1.0, 0.0}, torch::kDouble)));

  auto cosine = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine));
  CHECK(torch::equal(cosine->predictions(torch::tensor({0.4, 0.6, 0.5})), torch::tensor({0.0, 1.0, 0.0}, torch::kDouble)));

  auto sts = make_head(head_spec("sts", TaskTarget::regression));
  CHECK(torch::allclose(sts->predictions(torch::tensor({1.25f, 4.5f})), torch::tensor({1.25, 4.5}, torch::kDouble)));
}

TEST_CASE("Divergences: definitions, symmetry, zero at equality", "[models][heads]") {
  torch::manual_seed(5);
  auto sst = make_head(head_spec("sst", TaskTarget::classes, 4));
  auto a = torch::randn({6, 4}, torch::kDouble) * 2;
  auto b = torch::randn({6, 4}, torch::kDouble) * 2;
  // KL(p||q) + KL(q||p) from the probabilities, averaged over rows.
  auto p = torch::softmax(a, 1);
  auto q = torch::softmax(b, 1);
  auto sym_kl = ((p * (p / q).log()).sum(1) + (q * (q / p).log()).sum(1)).mean();
  CHECK(scalar(sst->divergence(a, b)) == Approx(scalar(sym_kl)));
  CHECK(scalar(sst->divergence(b, a)) == Approx(scalar(sym_kl)));
  CHECK(scalar(sst->divergence(a, a)) == 0.0);
  // Far-apart logits stay finite (softmax probabilities underflow to 0).
  auto far = torch::tensor({{500.0, -500.0}}, torch::kDouble);
  auto sst2 = make_head(head_spec("sst", TaskTarget::classes, 2));
  CHECK(std::isfinite(scalar(sst2->divergence(far, -far))));
  CHECK(scalar(sst2->divergence(far, -far)) == Approx(2000.0));  // p = (1, 0), q = (0, 1): (1 - 0)(0 + 1000) + (0 - 1)(-1000 - 0)

  // Bernoulli: KL both ways from the two outcome probabilities.
  auto bernoulli_sym_kl = [](const torch::Tensor& pp, const torch::Tensor& qq) {
    auto kl = [](const torch::Tensor& x, const torch::Tensor& y) {
      return x * (x / y).log() + (1 - x) * ((1 - x) / (1 - y)).log();
    };
    return (kl(pp, qq) + kl(qq, pp)).mean();
  };
  auto para = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross));
  auto za = torch::randn({6}, torch::kDouble) * 2;
  auto zb = torch::randn({6}, torch::kDouble) * 2;
  CHECK(scalar(para->divergence(za, zb)) == Approx(scalar(bernoulli_sym_kl(torch::sigmoid(za), torch::sigmoid(zb)))));
  auto cosine = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine));
  auto pa = torch::rand({6}, torch::kDouble) * 0.9 + 0.05;
  auto pb = torch::rand({6}, torch::kDouble) * 0.9 + 0.05;
  CHECK(scalar(cosine->divergence(pa, pb)) == Approx(scalar(bernoulli_sym_kl(pa, pb))));
  // A probability of exactly 0 or 1 is clamped, not log(0).
  CHECK(std::isfinite(scalar(cosine->divergence(torch::tensor({0.0, 1.0}, torch::kDouble),
                                                torch::tensor({1.0, 0.0}, torch::kDouble)))));

  auto sts = make_head(head_spec("sts", TaskTarget::regression));
  CHECK(scalar(sts->divergence(torch::tensor({1.0, 2.0}, torch::kDouble), torch::tensor({2.0, 0.0}, torch::kDouble))) ==
        Approx(2.5));
}

TEST_CASE("Divergence gradients: finite differences in double", "[models][heads]") {
  torch::manual_seed(9);
  auto sst = make_head(head_spec("sst", TaskTarget::classes, 3));
  auto para = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::cross));
  auto cosine = make_head(head_spec("para", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine));
  auto sts = make_head(head_spec("sts", TaskTarget::regression));
  struct Case {
    TaskHead head;
    torch::Tensor a, b;
  };
  std::vector<Case> cases = {
      {sst, torch::randn({4, 3}, torch::kDouble), torch::randn({4, 3}, torch::kDouble)},
      {para, torch::randn({4}, torch::kDouble), torch::randn({4}, torch::kDouble)},
      {cosine, torch::rand({4}, torch::kDouble) * 0.8 + 0.1, torch::rand({4}, torch::kDouble) * 0.8 + 0.1},
      {sts, torch::randn({4}, torch::kDouble), torch::randn({4}, torch::kDouble)},
  };
  for (auto& c : cases) {
    INFO("task " << c.head->spec().task);
    // Gradients flow into both arguments.
    check_gradient([&](const torch::Tensor& x) { return c.head->divergence(x, c.b); }, c.a);
    check_gradient([&](const torch::Tensor& x) { return c.head->divergence(c.a, x); }, c.b);
  }
}

TEST_CASE("Head specs are validated with the config key", "[models][heads]") {
  auto message = [](const HeadSpec& spec, bool has_pooler) {
    try {
      validate_head_spec(spec, has_pooler);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(head_spec("sst", TaskTarget::classes, 5), true).empty());
  CHECK(message(head_spec("sst", TaskTarget::classes, 5, PairMode::none, PairCombine::concat, Pooling::pooler), false)
            .find("tasks.sst.pooling") != std::string::npos);
  CHECK(message(head_spec("sst", TaskTarget::classes, 5, PairMode::none, PairCombine::concat, Pooling::pooler), true)
            .empty());
  CHECK(message(head_spec("sst", TaskTarget::classes, 1), true).find("at least 2 classes") != std::string::npos);
  CHECK(message(head_spec("para", TaskTarget::binary, 0, PairMode::cross, PairCombine::cosine), true)
            .find("tasks.para.combine") != std::string::npos);
  CHECK(message(head_spec("x", TaskTarget::classes, 3, PairMode::siamese, PairCombine::cosine), true)
            .find("tasks.x.combine") != std::string::npos);
  CHECK(message(head_spec("a.b", TaskTarget::regression), true).find("no '.'") != std::string::npos);
  auto bad_dropout = head_spec("sts", TaskTarget::regression);
  bad_dropout.dropout = 1.0;
  CHECK(message(bad_dropout, true).find("tasks.sts.dropout") != std::string::npos);
}
