// The encoder against reference outputs of an independent implementation
// (test/reference/bert_reference.py, built on torch.nn.TransformerEncoderLayer
// and cross-checked there against a second eager implementation), on tiny
// random checkpoints in both HuggingFace namings, converted by the project's
// script. And against the real bert-base-uncased when a converted copy is named
// by MTBERT_BERT_BASE_DIR.
#include <cstdlib>

#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/tensor_file.h"
#include "models/bert_model.h"
#include "models/pretrained_model.h"
#include "support/small_deberta_config.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

struct Diff {
  double hidden = 0;
  double pooled = 0;
};

// Max-abs differences, padded positions excluded (their values are not
// meaningful in any implementation).
Diff compare(const EncoderOutput& out, const torch::Tensor& mask, const torch::Tensor& ref_hidden,
             const torch::Tensor& ref_pooled) {
  auto keep = mask.unsqueeze(-1).to(torch::kFloat);
  Diff d;
  d.hidden = ((out.last_hidden_state - ref_hidden) * keep).abs().max().item<double>();
  if (ref_pooled.defined()) d.pooled = (out.pooler_output - ref_pooled).abs().max().item<double>();
  return d;
}

}  // namespace

TEST_CASE("BertModel matches the independent reference on tiny HF checkpoints", "[models][parity]") {
  const fs::path reference_dir = test::fixtures_dir() / "reference";
  REQUIRE(fs::is_directory(reference_dir));
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(reference_dir)) {
    if (entry.path().extension() != ".pt") continue;
    const std::string name = entry.path().stem().string();
    SECTION(name) {
      PretrainedModel pretrained = load_pretrained(test::fixtures_dir() / "models" / name);
      auto ref = read_tensor_dict(entry.path());
      REQUIRE(ref.at("attention_mask").min().item<int64_t>() == 0);          // padding in the batch
      REQUIRE(ref.at("token_type_ids").max().item<int64_t>() >= 1);          // two segments in the batch

      torch::NoGradGuard no_grad;
      auto out = pretrained.model(ref.at("input_ids"), ref.at("attention_mask"), ref.at("token_type_ids"));
      Diff d = compare(out, ref.at("attention_mask"), ref.at("last_hidden_state"),
                       ref.count("pooler_output") ? ref.at("pooler_output") : torch::Tensor());
      INFO(name << ": max-abs last_hidden_state " << d.hidden << ", pooler_output " << d.pooled);
      std::cout << name << ": max-abs last_hidden_state " << d.hidden << ", pooler_output " << d.pooled << "\n";
      CHECK(d.hidden < 1e-5);
      CHECK(d.pooled < 1e-5);
    }
    ++checked;
  }
  CHECK(checked >= 2);
}

TEST_CASE("BertModel parameter names are HuggingFace's", "[models]") {
  ModelConfig c;
  c.vocab_size = 50;
  c.hidden_size = 8;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 12;
  c.max_position_embeddings = 16;
  BertModel model(c);
  std::vector<std::string> names;
  for (const auto& p : model->named_parameters()) names.push_back(p.key());
  // 5 embedding tensors + 16 per layer + 2 pooler.
  CHECK(names.size() == 5 + 16 * 2 + 2);
  const std::vector<std::string> expected = {
      "embeddings.word_embeddings.weight",
      "embeddings.position_embeddings.weight",
      "embeddings.token_type_embeddings.weight",
      "embeddings.LayerNorm.weight",
      "embeddings.LayerNorm.bias",
      "encoder.layer.1.attention.self.query.weight",
      "encoder.layer.1.attention.self.key.bias",
      "encoder.layer.1.attention.self.value.weight",
      "encoder.layer.1.attention.output.dense.weight",
      "encoder.layer.1.attention.output.LayerNorm.bias",
      "encoder.layer.1.intermediate.dense.weight",
      "encoder.layer.1.output.dense.bias",
      "encoder.layer.1.output.LayerNorm.weight",
      "pooler.dense.weight",
      "pooler.dense.bias",
  };
  for (const auto& name : expected) CHECK(std::find(names.begin(), names.end(), name) != names.end());
  CHECK(model->named_buffers().size() == 0);
}

TEST_CASE("attention bias is 0 for tokens and the dtype's lowest value for padding", "[models]") {
  auto mask = torch::tensor({1, 1, 0}, torch::kLong).view({1, 3});
  auto bias = attention_bias_from_mask(mask, torch::kFloat);
  REQUIRE(bias.sizes() == torch::IntArrayRef({1, 1, 1, 3}));
  CHECK(bias[0][0][0][0].item<float>() == 0.0f);
  CHECK(bias[0][0][0][2].item<float>() == std::numeric_limits<float>::lowest());
  // In bf16 too, without overflowing to -inf.
  auto bias16 = attention_bias_from_mask(mask, torch::kBFloat16);
  CHECK(std::isfinite(bias16[0][0][0][2].item<float>()));
  // No mask (nothing padded): no bias.
  CHECK_FALSE(attention_bias_from_mask(torch::Tensor(), torch::kFloat).defined());
}

// A batch with nothing padded runs without a mask (TokenBatch::encoder_mask):
// the outputs of the all-ones mask, whose bias adds zeros, in float32 and
// under bf16 autocast (where the bias is made in bf16 once per pass), BERT
// and DeBERTa (the relative-position op without its bias).
TEST_CASE("no mask equals an all-ones mask, BERT and DeBERTa, float32 and bf16", "[models][deberta][autocast]") {
  for (const ModelConfig& c : {test::tiny_config(), test::small_deberta_config()}) {
    for (const bool bf16 : {false, true}) {
      DYNAMIC_SECTION(c.model_type << (bf16 ? " bf16" : " float32")) {
        torch::manual_seed(6);
        BertModel model(c);
        model->eval();
        torch::NoGradGuard no_grad;
        const AutocastScope autocast(torch::kCPU, bf16);
        auto ids = torch::randint(1, 40, {3, 7}, torch::kLong);
        const auto masked = model(ids, torch::ones({3, 7}, torch::kLong));
        const auto unmasked = model(ids, torch::Tensor());
        CHECK(torch::equal(masked.last_hidden_state, unmasked.last_hidden_state));
        if (masked.pooler_output.defined()) CHECK(torch::equal(masked.pooler_output, unmasked.pooler_output));
      }
    }
  }
}

// Under bf16 autocast the padding bias is bf16 and the scores stay bf16:
// padding still changes nothing of the real tokens, to bf16's rounding.
TEST_CASE("under bf16 autocast padding does not change the outputs of real tokens", "[models][autocast]") {
  for (const ModelConfig& c : {test::tiny_config(), test::small_deberta_config()}) {
    DYNAMIC_SECTION(c.model_type) {
      torch::manual_seed(7);
      BertModel model(c);
      model->eval();
      torch::NoGradGuard no_grad;
      const AutocastScope autocast(torch::kCPU, true);
      auto ids = torch::randint(1, 40, {1, 5}, torch::kLong);
      const auto alone = model(ids, torch::Tensor()).last_hidden_state;
      auto padded_ids = torch::cat({ids, torch::zeros({1, 3}, torch::kLong)}, 1);
      auto mask = torch::cat({torch::ones({1, 5}, torch::kLong), torch::zeros({1, 3}, torch::kLong)}, 1);
      const auto padded = model(padded_ids, mask).last_hidden_state.narrow(1, 0, 5);
      CHECK((padded.to(torch::kFloat) - alone.to(torch::kFloat)).abs().max().item<double>() < 0.05);
    }
  }
}

TEST_CASE("padding does not change the outputs of real tokens", "[models]") {
  torch::manual_seed(3);
  ModelConfig c;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 20;
  c.max_position_embeddings = 16;
  BertModel model(c);
  model->initialize_weights();
  model->eval();
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({5, 7, 9, 11}, torch::kLong).view({1, 4});
  auto short_out = model(ids, torch::ones({1, 4}, torch::kLong));
  auto padded_ids = torch::cat({ids, torch::zeros({1, 3}, torch::kLong)}, 1);
  auto padded_mask = torch::cat({torch::ones({1, 4}, torch::kLong), torch::zeros({1, 3}, torch::kLong)}, 1);
  auto long_out = model(padded_ids, padded_mask);
  using torch::indexing::Slice;
  auto diff = (long_out.last_hidden_state.index({Slice(), Slice(0, 4)}) - short_out.last_hidden_state).abs().max();
  CHECK(diff.item<double>() < 1e-6);
  CHECK((long_out.pooler_output - short_out.pooler_output).abs().max().item<double>() < 1e-6);
}

// Each layer hands back its probabilities with its output (no pointer in the
// context): one [B, heads, N, N] per layer, rows summing to 1, padding keys
// at 0, and the hidden states those of a run that did not ask.
TEST_CASE("output_attentions returns each layer's attention probabilities, BERT and DeBERTa", "[models]") {
  for (const ModelConfig& c : {test::tiny_config(), test::small_deberta_config()}) {
    DYNAMIC_SECTION(c.model_type) {
      torch::manual_seed(5);
      BertModel model(c);
      model->eval();
      torch::NoGradGuard no_grad;
      auto ids = torch::randint(1, 40, {2, 7}, torch::kLong);
      auto mask = torch::ones({2, 7}, torch::kLong);
      mask.index_put_({1, torch::indexing::Slice(4, 7)}, 0);
      const auto with = model(ids, mask, torch::Tensor(), /*output_attentions=*/true);
      const auto without = model(ids, mask);
      CHECK(without.attentions.empty());
      REQUIRE(with.attentions.size() == 2);
      for (const auto& probs : with.attentions) {
        REQUIRE(probs.sizes() == torch::IntArrayRef({2, c.num_attention_heads, 7, 7}));
        CHECK((probs.sum(-1) - 1).abs().max().item<double>() < 1e-5);
        CHECK(probs[1].narrow(-1, 4, 3).abs().max().item<double>() < 1e-12);
      }
      // LibTorch 2.x runs BERT's fused kernel when no probabilities are asked
      // for: the same values up to rounding.
      CHECK((with.last_hidden_state - without.last_hidden_state).abs().max().item<double>() < 1e-5);
    }
  }
}

TEST_CASE("initialize_weights follows HuggingFace's scheme", "[models]") {
  torch::manual_seed(0);
  ModelConfig c;
  c.vocab_size = 1000;
  c.hidden_size = 64;
  c.num_hidden_layers = 1;
  c.num_attention_heads = 4;
  c.intermediate_size = 128;
  c.pad_token_id = 3;
  BertModel model(c);
  model->initialize_weights();
  auto w = model->embeddings->word_embeddings->weight;
  CHECK(w[3].abs().sum().item<double>() == 0.0);  // padding row
  CHECK(std::abs(w.std().item<double>() - 0.02) < 0.001);
  auto layer = model->encoder->layer[0]->as<BertLayer>();
  CHECK(layer->attention->self->as<BertSelfAttentionImpl>()->query->bias.abs().sum().item<double>() == 0.0);
  CHECK(layer->output->LayerNorm->weight.eq(1).all().item<bool>());
}

TEST_CASE("bert-base-uncased matches HuggingFace's outputs", "[models][parity][real]") {
  const char* dir = std::getenv("MTBERT_BERT_BASE_DIR");
  auto data = test::shared_data_dir();
  if (!dir || !*dir) MTBERT_SKIP("set MTBERT_BERT_BASE_DIR to a converted bert-base-uncased folder");
  if (!data) MTBERT_SKIP("../shared/data is absent");
  auto ref = read_tensor_dict(*data / "reference" / "bert-base-uncased-sanity.pt");
  // A relative folder (as README shows it) names one under the repository:
  // CTest runs this from build/test.
  std::filesystem::path folder(dir);
  if (folder.is_relative()) folder = test::source_dir() / folder;
  PretrainedModel pretrained = load_pretrained(folder);
  auto ids = torch::tensor({101, 7592, 2088, 102, 0, 0, 0, 0, 101, 7592, 15756, 2897, 2005, 17953, 2361, 102},
                           torch::kLong)
                 .view({2, 8});
  auto mask = torch::tensor({1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, torch::kLong).view({2, 8});
  torch::NoGradGuard no_grad;
  auto out = pretrained.model(ids, mask);
  auto keep = mask.unsqueeze(-1).to(torch::kFloat);
  // The data set's stated tolerance: atol 1e-5, rtol 1e-3.
  CHECK(torch::allclose(out.last_hidden_state * keep, ref.at("last_hidden_state") * keep, 1e-3, 1e-5));
  CHECK(torch::allclose(out.pooler_output, ref.at("pooler_output"), 1e-3, 1e-5));
  std::cout << "bert-base-uncased: max-abs last_hidden_state "
            << ((out.last_hidden_state - ref.at("last_hidden_state")) * keep).abs().max().item<double>() << "\n";
}
