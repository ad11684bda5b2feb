// Parallel PALs: size by the formula, and the output against a computation by
// hand from the weights.
#include "models/parallel_pals.h"

#include <torch/torch.h>

#include "models/projected_attention.h"
#include "support/pal_reference.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;

namespace {

int64_t count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace

TEST_CASE("parallel PALs have (Hr + r) + (rH + H) + L * 3 (r^2 + r) parameters, V_E and V_D shared by layers",
          "[pals]") {
  const ModelConfig c = test::tiny_config(/*layers=*/3);
  const int64_t H = c.hidden_size, L = c.num_hidden_layers;
  for (const int64_t r : {4, 6}) {
    ParallelPals pals(c, PalConfig{PalKind::parallel, r, 2});
    CHECK(count(*pals) == (H * r + r) + (r * H + H) + L * 3 * (r * r + r));
    CHECK(pals->layer->size() == static_cast<size_t>(L));
  }
  // BERT-base with the paper's rank 204 and 6 heads: 1,819,836 per task, 1.7% of BERT-base's 109M.
  ModelConfig base;
  ParallelPals pals(base, PalConfig{PalKind::parallel, 204, 6});
  CHECK(count(*pals) == 1819836);
}

TEST_CASE("a parallel PAL is GELU(V_D(SA_l(V_E h))) with the padding masked", "[pals]") {
  torch::manual_seed(3);
  const ModelConfig c = test::tiny_config(/*layers=*/2);
  ParallelPals pals(c, PalConfig{PalKind::parallel, 6, 3});
  pals->eval();
  const auto in = test::tiny_batch(3, 5);
  const auto h = torch::randn({3, 5, c.hidden_size});
  const auto bias = attention_bias_from_mask(in.attention_mask, torch::kFloat);
  for (int64_t layer = 0; layer < 2; ++layer) {
    auto* sa = pals->layer[layer]->as<ProjectedSelfAttention>();
    auto projected = test::affine(h, pals->encoder->weight, pals->encoder->bias);
    auto attended = test::reference_attention(projected, in.attention_mask, 3, sa->query->weight, sa->query->bias,
                                              sa->key->weight, sa->key->bias, sa->value->weight, sa->value->bias);
    auto expected = test::reference_gelu(test::affine(attended, pals->decoder->weight, pals->decoder->bias));
    auto got = pals->forward(layer, h, bias);
    INFO("layer " << layer);
    // Padded queries attend like any other row; every row is compared.
    CHECK(test::max_abs_diff(got, expected) < 1e-5);
  }
}
