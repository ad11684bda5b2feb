// DeBERTa's disentangled attention in the encoder: the tiny DeBERTa-v2/v3
// checkpoints of make_test_fixtures.py (HF naming, converted by the project's
// script) against the independent float64 reference
// (test/reference/deberta_reference.py, cross-checked there against a literal
// Algorithm-1 implementation); and the module's own properties.
#include <cmath>
#include <map>

#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/tensor_file.h"
#include "models/bert_model.h"
#include "models/disentangled_attention.h"
#include "models/pretrained_model.h"
#include "models/relative_position.h"
#include "support/small_deberta_config.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace mtbert;

TEST_CASE("DeBERTa encoder matches the independent reference on tiny HF checkpoints",
          "[models][parity][deberta]") {
  const fs::path reference_dir = test::fixtures_dir() / "reference-deberta";
  REQUIRE(fs::is_directory(reference_dir));
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(reference_dir)) {
    if (entry.path().extension() != ".pt") continue;
    const std::string name = entry.path().stem().string();
    SECTION(name) {
      PretrainedModel pretrained = load_pretrained(test::fixtures_dir() / "models" / name);
      CHECK(pretrained.config.model_type == "deberta-v2");
      CHECK(pretrained.config.relative_attention);
      auto ref = read_tensor_dict(entry.path());
      const auto& mask = ref.at("attention_mask");
      REQUIRE(mask.min().item<int64_t>() == 0);  // padding in the batch
      torch::NoGradGuard no_grad;
      auto types = pretrained.config.type_vocab_size > 0 ? ref.at("token_type_ids") : torch::Tensor();
      auto out = pretrained.model(ref.at("input_ids"), mask, types);
      auto keep = mask.unsqueeze(-1).to(torch::kFloat);
      const double diff = ((out.last_hidden_state - ref.at("last_hidden_state")) * keep).abs().max().item<double>();
      std::cout << name << ": max-abs last_hidden_state " << diff << "\n";
      CHECK(diff < 1e-5);
      CHECK(!out.pooler_output.defined());  // DebertaV2Model has no pooler
    }
    ++checked;
  }
  CHECK(checked >= 7);
}

TEST_CASE("disentangled attention: names, padding invariance, gradients, half precision", "[models][deberta]") {
  torch::manual_seed(5);
  ModelConfig c = test::small_deberta_config();
  BertModel model(c, BertModelOptions{false});
  model->initialize_weights();

  SECTION("parameter names: BERT's for the shared structure, DeBERTa's for the rest") {
    std::vector<std::string> names;
    for (const auto& p : model->named_parameters()) names.push_back(p.key());
    for (const auto* name :
         {"encoder.layer.0.attention.self.query.weight", "encoder.layer.1.attention.self.key.bias",
          "encoder.rel_embeddings.weight", "encoder.LayerNorm.weight", "embeddings.word_embeddings.weight"})
      CHECK(std::find(names.begin(), names.end(), name) != names.end());
    for (const auto* absent : {"embeddings.position_embeddings.weight", "embeddings.token_type_embeddings.weight",
                               "encoder.layer.0.attention.self.pos_key_proj.weight"})
      CHECK(std::find(names.begin(), names.end(), absent) == names.end());
    CHECK(model->encoder->rel_embeddings->weight.size(0) == 16);  // 2k rows, k = position_buckets
  }
  SECTION("separate position projections without share_att_key") {
    ModelConfig separate = c;
    separate.share_att_key = false;
    separate.pos_att_type = {"c2p"};
    BertModel m(separate);
    auto params = m->named_parameters();
    CHECK(params.contains("encoder.layer.1.attention.self.pos_key_proj.weight"));
    CHECK(!params.contains("encoder.layer.1.attention.self.pos_query_proj.weight"));
  }
  SECTION("p2p alone uses both position projections, and both learn") {
    ModelConfig separate = c;
    separate.share_att_key = false;
    separate.pos_att_type = {"p2p"};
    BertModel m(separate);
    m->initialize_weights();
    auto ids = torch::randint(1, 50, {2, 9}, torch::kLong);
    m(ids, torch::ones({2, 9}, torch::kLong)).last_hidden_state.pow(2).sum().backward();
    auto params = m->named_parameters();
    for (const char* name : {"encoder.layer.1.attention.self.pos_key_proj.weight",
                             "encoder.layer.1.attention.self.pos_query_proj.weight", "encoder.rel_embeddings.weight"}) {
      INFO(name);
      REQUIRE(params.contains(name));
      CHECK(params[name].grad().abs().sum().item<double>() > 0);
    }
  }
  SECTION("padding does not change the outputs of real tokens") {
    model->eval();
    torch::NoGradGuard no_grad;
    auto ids = torch::tensor({5, 7, 9, 11, 13}, torch::kLong).view({1, 5});
    auto short_out = model(ids, torch::ones({1, 5}, torch::kLong));
    auto padded = torch::cat({ids, torch::zeros({1, 4}, torch::kLong)}, 1);
    auto mask = torch::cat({torch::ones({1, 5}, torch::kLong), torch::zeros({1, 4}, torch::kLong)}, 1);
    auto long_out = model(padded, mask);
    using torch::indexing::Slice;
    CHECK((long_out.last_hidden_state.index({Slice(), Slice(0, 5)}) - short_out.last_hidden_state)
              .abs()
              .max()
              .item<double>() < 1e-5);
  }
  SECTION("every parameter gets a gradient, relative embeddings included") {
    model->train();
    auto ids = torch::randint(1, 50, {3, 10}, torch::kLong);
    auto out = model(ids, torch::ones({3, 10}, torch::kLong));
    out.last_hidden_state.pow(2).sum().backward();
    for (const auto& p : model->named_parameters()) {
      INFO(p.key());
      REQUIRE(p.value().grad().defined());
      if (p.key() != "embeddings.word_embeddings.weight") CHECK(p.value().grad().abs().sum().item<double>() > 0);
    }
  }
  // (fp16 on CPU is not possible with LibTorch 1.13: no half LayerNorm; the
  // op's own fp16 path is tested in test/ops.)
  SECTION("a bf16 model stays finite and close to fp32") {
    model->eval();
    torch::NoGradGuard no_grad;
    auto ids = torch::randint(1, 50, {2, 12}, torch::kLong);
    auto mask = torch::ones({2, 12}, torch::kLong);
    mask.index_put_({1, torch::indexing::Slice(8, 12)}, 0);
    auto reference = model(ids, mask).last_hidden_state;
    for (auto dtype : {torch::kBFloat16}) {
      BertModel low(c, BertModelOptions{false});
      torch::NoGradGuard guard;
      for (auto& [name, t] : low->named_parameters().pairs()) t.copy_(model->named_parameters()[name]);
      low->to(dtype);
      low->eval();
      auto out = low(ids, mask).last_hidden_state.to(torch::kFloat);
      CHECK(torch::isfinite(out).all().item<bool>());
      auto keep = mask.unsqueeze(-1).to(torch::kFloat);
      const double diff = ((out - reference) * keep).abs().max().item<double>();
      std::cout << "bf16 model: max-abs difference to fp32 " << diff << "\n";
      CHECK(diff < 0.3);
    }
  }
}

// precision: bf16 runs the forward pass under autocast with float32 weights:
// the matrix products (content and position scores) come out bf16 while the
// padding bias, made from the float32 embeddings, stays float32; the op's
// autocast kernel brings them to one dtype. Banded (N = 128) and full terms.
TEST_CASE("a DeBERTa-style model trains under bf16 autocast, padded, banded or not", "[models][deberta][autocast]") {
  ModelConfig c = test::small_deberta_config();
  c.max_position_embeddings = 128;
  c.position_buckets = 0;  // clamped positions: at N = 128 each tile needs 159 of 255 rows, so it bands
  c.max_relative_positions = 128;
  for (const int64_t len : {12, 128}) {
    for (const bool p2p : {false, true}) {
      DYNAMIC_SECTION("N = " << len << (p2p ? ", all four terms" : "")) {
        c.pos_att_type = p2p ? std::vector<std::string>{"c2p", "p2c", "p2p"} : std::vector<std::string>{"c2p", "p2c"};
        CHECK(RelativePositionCache(c).get(len, torch::kCPU).plan->banded() == (len == 128));
        torch::manual_seed(3);
        BertModel model(c, BertModelOptions{false});
        model->train();
        auto ids = torch::randint(1, 50, {2, len}, torch::kLong);
        auto mask = torch::ones({2, len}, torch::kLong);
        mask.index_put_({1, torch::indexing::Slice(len / 2, len)}, 0);
        auto loss_of = [&](bool bf16) {
          model->zero_grad();
          torch::Tensor loss;
          {
            AutocastScope scope(torch::kCPU, bf16);
            auto hidden = model(ids, mask).last_hidden_state;
            if (bf16) CHECK(hidden.scalar_type() == torch::kFloat);  // LayerNorm's output: float32 under autocast
            loss = (hidden * mask.unsqueeze(-1)).pow(2).mean();
          }
          loss.backward();
          std::map<std::string, torch::Tensor> grads;
          for (const auto& p : model->named_parameters()) grads[p.key()] = p.value().grad().clone();
          return std::make_pair(loss.item<double>(), grads);
        };
        const auto [loss32, grads32] = loss_of(false);
        const auto [loss16, grads16] = loss_of(true);
        CHECK(std::isfinite(loss16));
        CHECK(loss16 == Approx(loss32).epsilon(0.05));
        for (const auto& [name, g] : grads16) {
          INFO(name);
          CHECK(g.scalar_type() == torch::kFloat);
          CHECK(torch::isfinite(g).all().item<bool>());
          const double scale = grads32.at(name).abs().max().item<double>() + 1e-6;
          CHECK((g - grads32.at(name)).abs().max().item<double>() / scale < 0.1);
        }
      }
    }
  }
}

TEST_CASE("banded position GEMMs equal the full products, forward and backward", "[models][deberta][relpos]") {
  ModelConfig base = test::small_deberta_config();
  // Long sequences against wide tables (clamped, and log buckets), with shared
  // and with separate position projections.
  // The last also with p2p, which rides along with either layout.
  struct Variant {
    int64_t buckets, max_relative;
    bool share, p2p;
  };
  for (const Variant& v : {Variant{-1, 256, true, false}, Variant{64, 512, false, false},
                           Variant{64, 512, false, true}}) {
    ModelConfig c = base;
    c.position_buckets = v.buckets;
    c.max_relative_positions = v.max_relative;
    c.share_att_key = v.share;
    if (v.p2p) c.pos_att_type.push_back("p2p");
    torch::manual_seed(17);
    DisentangledSelfAttention attention(c);
    attention->eval();  // no dropout: both runs see the same inputs
    const int64_t length = 100;
    RelativePositionCache cache(c);
    const RelativePositions positions = cache.get(length, torch::kCPU);
    const auto& index = positions.plan->index();
    const auto band = ops::make_relative_plan(index, kBandTileRows);
    auto hidden = torch::randn({3, length, c.hidden_size});
    auto relative = torch::randn({positions.span, c.hidden_size});
    auto run = [&](const ops::RelativePlanPtr& plan) {
      EncoderContext ctx;
      ctx.relative_embeddings = relative.clone().requires_grad_(true);
      ctx.relative_plan = plan;
      auto mask = torch::ones({3, length}, torch::kLong);
      mask.index_put_({1, torch::indexing::Slice(60, length)}, 0);
      ctx.attention_bias = attention_bias_from_mask(mask, torch::kFloat);
      auto x = hidden.clone().requires_grad_(true);
      attention->zero_grad();
      auto out = attention(x, ctx).hidden;
      out.pow(2).sum().backward();
      std::vector<torch::Tensor> result = {out, x.grad(), ctx.relative_embeddings.grad()};
      for (const auto& p : attention->parameters()) result.push_back(p.grad().clone());
      return result;
    };
    // Tiles of 7 rows: 100 is no multiple, so the last tile is padded.
    const auto full = run(ops::make_relative_plan(index)), banded = run(band),
               odd = run(ops::make_relative_plan(index, 7));
    INFO("buckets " << v.buckets << ", p2p " << v.p2p << ", span " << positions.span << ", band width "
                    << band->width());
    CHECK(band->width() < positions.span);
    for (size_t k = 0; k < full.size(); ++k) {
      INFO("output " << k);
      CHECK(torch::allclose(banded[k], full[k], 1e-4, 1e-5));
      CHECK(torch::allclose(odd[k], full[k], 1e-4, 1e-5));
    }
  }
}
