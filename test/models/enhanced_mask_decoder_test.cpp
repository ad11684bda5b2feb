// EMD (enhanced_mask_decoder.h): in place of the last layer's own pass, passes
// through it with queries H + absolute positions, then the previous output;
// keys/values H, the output of the second-to-last layer.
// Its numbers against the float64 reference are checked by the deberta-emd
// fixture in disentangled_attention_test.cpp.
#include <torch/torch.h>

#include "models/bert_model.h"
#include "support/small_deberta_config.h"
#include "support/test_support.h"

using namespace mtbert;

TEST_CASE("EMD runs the last layer twice on the second-to-last layer's output", "[models][deberta]") {
  torch::manual_seed(9);
  ModelConfig c = test::small_deberta_config();
  c.emd_layers = 2;
  BertModel emd(c, BertModelOptions{false});
  emd->initialize_weights();
  emd->eval();
  // The same weights without EMD give H.
  ModelConfig plain_config = c;
  plain_config.emd_layers = 0;
  plain_config.position_biased_input = false;
  BertModel plain(plain_config, BertModelOptions{false});
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : plain->named_parameters().pairs()) t.copy_(emd->named_parameters()[name]);
  plain->eval();

  auto ids = torch::randint(1, 50, {2, 9}, torch::kLong);
  auto mask = torch::ones({2, 9}, torch::kLong);
  EncoderContext ctx;
  ctx.attention_bias = attention_bias_from_mask(mask, torch::kFloat);
  plain->encoder->add_relative_positions(ctx, 9, torch::kCPU);
  // H_{L-1}: the embeddings through the first of the two layers.
  auto hidden = plain->encoder->layer[0]->as<BertLayer>()->forward(plain->embed(ids, torch::Tensor()), ctx).hidden;
  auto& last = *plain->encoder->layer[1]->as<BertLayer>();
  auto positions = emd->embeddings->position_embeddings->weight.narrow(0, 0, 9).unsqueeze(0);
  auto first = last.forward(hidden, ctx, hidden + positions).hidden;
  auto second = last.forward(hidden, ctx, first).hidden;
  CHECK((emd(ids, mask).last_hidden_state - second).abs().max().item<double>() < 1e-6);
  // The last layer ran twice, not three times: attentions of layer 0, then one per EMD pass.
  CHECK(emd->forward(ids, mask, torch::Tensor(), true).attentions.size() == 3);
}
