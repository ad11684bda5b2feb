// The encoder's device paths: the tiny HuggingFace parity fixtures (BERT and
// DeBERTa-style) and a training step on CUDA against the CPU, bf16 autocast on
// CUDA, and fused attention (at::scaled_dot_product_attention, LibTorch 2.x)
// against the explicit softmax path, on the CPU and on CUDA. Tests that need
// a GPU report SKIPPED where there is none (scripts/gpu/check.sh runs them on
// one).
#include <algorithm>

#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/op_profile.h"
#include "core/tensor_file.h"
#include "core/torch_compat.h"
#include "models/bert_model.h"
#include "models/pretrained_model.h"
#include "support/small_deberta_config.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

// Float32 matrix products in full precision (no TF32), so that the GPU's
// results are comparable to the CPU's at 1e-4.
struct NoTf32 {
  NoTf32() {
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
};

// The largest difference of `a` and `b` over the positions `mask` keeps.
double masked_difference(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& mask) {
  const auto keep = mask.unsqueeze(-1).to(torch::kFloat);
  return ((a.to(torch::kCPU) - b.to(torch::kCPU)) * keep).abs().max().item<double>();
}

}  // namespace

TEST_CASE("the parity fixtures give the reference outputs on CUDA", "[models][parity][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const NoTf32 no_tf32;
  int checked = 0;
  for (const char* kind : {"reference", "reference-deberta"}) {
    for (const auto& entry : fs::directory_iterator(test::fixtures_dir() / kind)) {
      if (entry.path().extension() != ".pt") continue;
      const std::string name = entry.path().stem().string();
      INFO(name);
      PretrainedModel pretrained = load_pretrained(test::fixtures_dir() / "models" / name);
      pretrained.model->to(torch::kCUDA);
      auto ref = read_tensor_dict(entry.path());
      const auto& mask = ref.at("attention_mask");
      auto types = pretrained.config.type_vocab_size > 0 && ref.count("token_type_ids") ? ref.at("token_type_ids")
                                                                                       : torch::Tensor();
      torch::NoGradGuard no_grad;
      auto out = pretrained.model(ref.at("input_ids").cuda(), mask.cuda(), types.defined() ? types.cuda() : types);
      const double diff = masked_difference(out.last_hidden_state, ref.at("last_hidden_state"), mask);
      std::cout << name << " on CUDA: max-abs last_hidden_state " << diff << "\n";
      CHECK(diff < 1e-4);
      ++checked;
    }
  }
  CHECK(checked >= 7);
}

// Gradients, not weights after an AdamW step: AdamW's first step moves every
// weight by about lr * sign(gradient), so a gradient of rounding-noise size
// (1e-9 on one device, -1e-9 on the other) moves a weight by 2 * lr. And
// against a random target: the mean square of a freshly initialised
// LayerNorm's output is 1 whatever its input, which leaves every gradient
// below it rounding noise.
TEST_CASE("a training step on CUDA gives the CPU step's gradients (fp32)", "[models][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const NoTf32 no_tf32;
  for (const bool deberta : {false, true}) {
    INFO((deberta ? "DeBERTa-style" : "BERT"));
    torch::manual_seed(4);
    ModelConfig c = deberta ? test::small_deberta_config() : test::tiny_config();
    if (deberta) c.pos_att_type.push_back("p2p");  // all four terms
    BertModel cpu(c, BertModelOptions{false}), gpu(c, BertModelOptions{false});
    cpu->initialize_weights();
    {
      torch::NoGradGuard no_grad;
      for (auto& [name, p] : gpu->named_parameters().pairs()) p.copy_(cpu->named_parameters()[name]);
    }
    gpu->to(torch::kCUDA);
    const TokenBatch batch = test::tiny_batch(3, 12, c.vocab_size);
    const auto target = torch::randn({3, 12, c.hidden_size});
    auto backward = [&](BertModel& model, torch::Device device) {
      const TokenBatch in = batch.to(device);
      auto out = model(in.input_ids, in.attention_mask, c.type_vocab_size > 0 ? in.token_type_ids : torch::Tensor());
      ((out.last_hidden_state - target.to(device)) * in.attention_mask.unsqueeze(-1)).pow(2).mean().backward();
    };
    backward(cpu, torch::kCPU);
    backward(gpu, torch::kCUDA);
    // Relative to each gradient's largest entry, with a floor of 1e-3 of the
    // largest entry of all: the key bias's gradient is zero in exact
    // arithmetic (it adds q . b_k to a whole row of scores, which softmax
    // ignores), so both devices give rounding noise there (5e-10 against
    // 0.34 here on the CPU) and its own scale would compare noise with noise.
    double largest = 0;
    for (const auto& p : cpu->parameters()) largest = std::max(largest, p.grad().abs().max().item<double>());
    double worst = 0;
    for (const auto& [name, p] : cpu->named_parameters().pairs()) {
      const auto g = gpu->named_parameters()[name].grad().cpu();
      const double scale = std::max(p.grad().abs().max().item<double>(), 1e-3 * largest);
      worst = std::max(worst, (g - p.grad()).abs().max().item<double>() / scale);
    }
    std::cout << (deberta ? "DeBERTa-style (all four terms)" : "BERT")
              << " gradients, CUDA vs CPU: max relative difference " << worst << "\n";
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("a bf16 autocast step on CUDA is finite and close to fp32", "[models][autocast][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  for (const bool deberta : {false, true}) {
    INFO((deberta ? "DeBERTa-style" : "BERT"));
    torch::manual_seed(6);
    const ModelConfig c = deberta ? test::small_deberta_config() : test::tiny_config();
    BertModel model(c, BertModelOptions{false});
    model->initialize_weights();
    model->to(torch::kCUDA);
    const TokenBatch in = test::tiny_batch(3, 12, c.vocab_size).to(torch::kCUDA);
    auto loss_of = [&](bool bf16) {
      model->zero_grad();
      torch::Tensor loss;
      {
        const AutocastScope scope(torch::kCUDA, bf16);
        auto out = model(in.input_ids, in.attention_mask, c.type_vocab_size > 0 ? in.token_type_ids : torch::Tensor());
        loss = (out.last_hidden_state.to(torch::kFloat) * in.attention_mask.unsqueeze(-1)).pow(2).mean();
      }
      loss.backward();
      return loss.item<double>();
    };
    const double fp32 = loss_of(false), bf16 = loss_of(true);
    CHECK(std::isfinite(bf16));
    CHECK(bf16 == Approx(fp32).epsilon(0.05));
    for (const auto& p : model->parameters()) CHECK(torch::isfinite(p.grad()).all().item<bool>());
  }
}

TEST_CASE("fused attention gives the explicit path's outputs", "[models][attention]") {
  if (!compat::kHasFusedAttention) MTBERT_SKIP("LibTorch " TORCH_VERSION " has no at::scaled_dot_product_attention");
  std::vector<torch::Device> devices{torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  const NoTf32 no_tf32;
  for (const auto& device : devices) {
    INFO(device.str());
    torch::manual_seed(8);
    const ModelConfig c = test::tiny_config();
    BertModel model(c, BertModelOptions{false});
    model->initialize_weights();
    model->to(device);
    model->eval();
    const TokenBatch in = test::tiny_batch(4, 12, c.vocab_size).to(device);
    torch::NoGradGuard no_grad;
    // Asking for the attention probabilities takes the explicit path.
    const auto fused = model(in.input_ids, in.attention_mask, in.token_type_ids).last_hidden_state;
    const auto explicit_path =
        model(in.input_ids, in.attention_mask, in.token_type_ids, /*output_attentions=*/true).last_hidden_state;
    CHECK(masked_difference(fused, explicit_path, in.attention_mask.cpu()) < 1e-5);
  }
}

TEST_CASE("on a CPU fused attention serves float32 without dropout only", "[models][attention]") {
  if (!compat::kHasFusedAttention) MTBERT_SKIP("LibTorch " TORCH_VERSION " has no at::scaled_dot_product_attention");
  // LibTorch's CPU kernel has no dropout (it falls back to an unfused path)
  // and measured 3-6x slower than the explicit path in bf16.
  torch::manual_seed(8);
  ModelConfig c = test::tiny_config();
  c.attention_probs_dropout_prob = 0.1;
  BertModel model(c, BertModelOptions{false});
  model->initialize_weights();
  const TokenBatch in = test::tiny_batch(4, 12, c.vocab_size);
  const auto fused_in = [&](bool training, bool bf16) {
    model->train(training);
    const auto ops = profile_ops(
        [&] {
          const AutocastScope autocast(torch::kCPU, bf16);
          model(in.input_ids, in.attention_mask, in.token_type_ids);
        },
        1);
    return std::any_of(ops.begin(), ops.end(),
                       [](const OpTime& op) { return op.op == "aten::scaled_dot_product_attention"; });
  };
  CHECK(fused_in(/*training=*/false, /*bf16=*/false));
  CHECK_FALSE(fused_in(/*training=*/true, /*bf16=*/false));
  CHECK_FALSE(fused_in(/*training=*/false, /*bf16=*/true));
}
