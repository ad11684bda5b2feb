#include "models/bert_model.h"

#include <torch/torch.h>

#include "models/enhanced_mask_decoder.h"

namespace mtbert {

BertModelImpl::BertModelImpl(const ModelConfig& config, BertModelOptions options) : config_(config) {
  embeddings = register_module("embeddings", BertEmbeddings(config));
  encoder = register_module("encoder", BertEncoder(config));
  if (options.with_pooler) pooler = register_module("pooler", BertPooler(config));
}

EncoderOutput BertModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                                     const torch::Tensor& token_type_ids, bool output_attentions) {
  return encode(embed(input_ids, token_type_ids), attention_mask, EncoderContext{}, output_attentions);
}

torch::Tensor BertModelImpl::embed(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids) {
  return embeddings(input_ids, token_type_ids);
}

EncoderOutput BertModelImpl::encode(const torch::Tensor& embedded, const torch::Tensor& attention_mask,
                                    EncoderContext ctx, bool output_attentions) {
  EncoderOutput out;
  ctx.attention_bias = attention_bias_from_mask(attention_mask, embedded.scalar_type());
  encoder->add_relative_positions(ctx, embedded.size(1), embedded.device());
  if (output_attentions) ctx.attention_probs = &out.attentions;
  out.last_hidden_state = encoder(embedded, ctx);
  if (config_.emd_layers > 0) {
    auto& last = *encoder->layer[encoder->layer->size() - 1]->as<BertLayer>();
    out.last_hidden_state = enhanced_mask_decoder(last, out.last_hidden_state,
                                                  embeddings->absolute_positions(embedded.size(1)),
                                                  config_.emd_layers, ctx);
  }
  if (pooler) out.pooler_output = pooler(out.last_hidden_state);
  return out;
}

void BertModelImpl::initialize_weights() {
  torch::NoGradGuard no_grad;
  const double std = config_.initializer_range;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, std);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, std);
      if (auto pad = embedding->options.padding_idx()) embedding->weight[*pad].zero_();
    } else if (auto* norm = module->as<torch::nn::LayerNorm>()) {
      norm->weight.fill_(1.0);
      norm->bias.zero_();
    }
  }
}

}  // namespace mtbert
