// load_pretrained with config overrides: a BERT checkpoint run with
// disentangled attention gets exactly the new relative-position tensors
// initialized, every other tensor from the checkpoint, and a list of both.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/safetensors.h"
#include "core/user_error.h"
#include "models/pretrained_model.h"
#include "support/test_support.h"

using namespace mtbert;

namespace {

std::filesystem::path bert_fixture() { return test::fixtures_dir() / "models" / "bert-modern"; }

}  // namespace

TEST_CASE("a BERT checkpoint loads into BERT with disentangled attention", "[models][pretrained][deberta]") {
  torch::manual_seed(1);
  const auto checkpoint = read_safetensors(bert_fixture() / "model.safetensors").tensors;
  const int64_t layers = read_model_config(bert_fixture() / "config.json").num_hidden_layers;

  SECTION("shared position projections: only the relative embeddings are new") {
    auto loaded = load_pretrained(bert_fixture(), {{"relative_attention", true},
                                                   {"pos_att_type", "c2p|p2c"},
                                                   {"max_relative_positions", 16},
                                                   {"share_att_key", true}});
    CHECK(loaded.initialized == std::vector<std::string>{"encoder.rel_embeddings.weight"});
    CHECK(loaded.unused.empty());
    CHECK(loaded.config.relative_attention);
    CHECK(loaded.model->encoder->rel_embeddings->weight.size(0) == 32);
    // HF's initialization: N(0, initializer_range).
    CHECK(std::abs(loaded.model->encoder->rel_embeddings->weight.std().item<double>() - 0.02) < 0.005);
    for (const auto& p : loaded.model->named_parameters()) {
      if (p.key() == "encoder.rel_embeddings.weight") continue;
      INFO(p.key());
      CHECK(torch::equal(p.value(), checkpoint.at(p.key())));
    }
  }
  SECTION("separate projections, no absolute positions, log buckets, EMD") {
    auto loaded = load_pretrained(bert_fixture(), {{"relative_attention", true},
                                                   {"pos_att_type", {"c2p", "p2c"}},
                                                   {"position_buckets", 8},
                                                   {"max_relative_positions", 32},
                                                   {"norm_rel_ebd", "layer_norm"},
                                                   {"position_biased_input", false}});
    std::vector<std::string> expected = {"encoder.LayerNorm.bias", "encoder.LayerNorm.weight",
                                         "encoder.rel_embeddings.weight"};
    for (int64_t i = 0; i < layers; ++i)
      for (const char* proj : {"pos_key_proj", "pos_query_proj"})
        for (const char* kind : {"bias", "weight"})
          expected.push_back(fmt::format("encoder.layer.{}.attention.self.{}.{}", i, proj, kind));
    std::sort(expected.begin(), expected.end());
    auto initialized = loaded.initialized;
    std::sort(initialized.begin(), initialized.end());
    CHECK(initialized == expected);
    CHECK(loaded.unused == std::vector<std::string>{"embeddings.position_embeddings.weight"});
    // Re-adding them for EMD keeps the checkpoint's absolute positions.
    auto emd = load_pretrained(bert_fixture(), {{"relative_attention", true},
                                                {"pos_att_type", "c2p|p2c"},
                                                {"share_att_key", true},
                                                {"position_biased_input", false},
                                                {"emd_layers", 2}});
    CHECK(emd.unused.empty());
    CHECK(torch::equal(emd.model->embeddings->position_embeddings->weight,
                       checkpoint.at("embeddings.position_embeddings.weight")));
    torch::NoGradGuard no_grad;
    auto ids = torch::tensor({2, 10, 20, 30, 3}, torch::kLong).view({1, 5});
    auto out = emd.model(ids, torch::ones_like(ids));
    CHECK(torch::isfinite(out.last_hidden_state).all().item<bool>());
  }
  SECTION("no overrides: the same as the strict load") {
    auto loaded = load_pretrained(bert_fixture(), nlohmann::json::object());
    CHECK(loaded.initialized.empty());
    CHECK(loaded.unused.empty());
  }
  SECTION("mistakes are UserErrors") {
    CHECK_THROWS_WITH(load_pretrained(bert_fixture(), {{"relative_atention", true}}),
                      Catch::Matchers::ContainsSubstring("not a model config key"));
    CHECK_THROWS_WITH(load_pretrained(bert_fixture(), {{"hidden_size", 96}, {"num_attention_heads", 6}}),
                      Catch::Matchers::ContainsSubstring("has shape"));
    CHECK_THROWS_WITH(load_pretrained(bert_fixture(), {{"pos_att_type", "c2p|p2x"}}),
                      Catch::Matchers::ContainsSubstring("pos_att_type \"p2x\""));
    CHECK_THROWS_AS(load_pretrained(bert_fixture(), nlohmann::json::array()), UserError);
  }
}
