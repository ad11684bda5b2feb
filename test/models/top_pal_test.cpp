// The "top only" PAL block: size by the formula, and the output against a
// computation by hand from the weights.
#include "models/top_pal.h"

#include <torch/torch.h>

#include "support/pal_reference.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;

TEST_CASE("a top PAL has (Hr + r) + 4 (r^2 + r) + 2r + (4r^2 + 4r) + (4r^2 + r) + (rH + H) parameters", "[pals]") {
  const ModelConfig c = test::tiny_config();
  const int64_t H = c.hidden_size;
  for (const int64_t r : {4, 6}) {
    TopPal pal(c, PalConfig{PalKind::top, r, 2});
    int64_t n = 0;
    for (const auto& p : pal->parameters()) n += p.numel();
    CHECK(n == (H * r + r) + 4 * (r * r + r) + 2 * r + (4 * r * r + 4 * r) + (4 * r * r + r) + (r * H + H));
  }
}

TEST_CASE("a top PAL is V_D(FFN(LN(x + MH(x) W^o))) of x = V_E h", "[pals]") {
  torch::manual_seed(4);
  const ModelConfig c = test::tiny_config();
  TopPal pal(c, PalConfig{PalKind::top, 6, 2});
  pal->eval();
  {
    // Non-trivial LayerNorm parameters, so that they are checked too.
    torch::NoGradGuard no_grad;
    pal->LayerNorm->weight.uniform_(0.5, 1.5);
    pal->LayerNorm->bias.uniform_(-0.5, 0.5);
  }
  const auto in = test::tiny_batch(3, 5);
  const auto h = torch::randn({3, 5, c.hidden_size});
  auto x = test::affine(h, pal->encoder->weight, pal->encoder->bias);
  const auto& a = pal->attention;
  REQUIRE(a->output);
  auto heads = test::reference_attention(x, in.attention_mask, 2, a->query->weight, a->query->bias, a->key->weight,
                                         a->key->bias, a->value->weight, a->value->bias);
  auto y = x + test::affine(heads, a->output->weight, a->output->bias);
  const auto mean = y.mean(-1, true), var = (y - mean).pow(2).mean(-1, true);
  y = (y - mean) / torch::sqrt(var + c.layer_norm_eps) * pal->LayerNorm->weight + pal->LayerNorm->bias;
  y = test::affine(test::reference_gelu(test::affine(y, pal->intermediate->weight, pal->intermediate->bias)),
                   pal->output->weight, pal->output->bias);
  const auto expected = test::affine(y, pal->decoder->weight, pal->decoder->bias);
  const auto got = pal->forward(h, attention_bias_from_mask(in.attention_mask, torch::kFloat));
  CHECK(test::max_abs_diff(got, expected) < 1e-5);
}
