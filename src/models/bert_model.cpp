#include "models/bert_model.h"

#include <torch/torch.h>

#include "models/autocast_linear.h"
#include "models/enhanced_mask_decoder.h"
#include "models/weight_init.h"

namespace mtbert {

BertModelImpl::BertModelImpl(const ModelConfig& config, BertModelOptions options) : config_(config) {
  config.check_fits_memory();
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
  return pooled(run_layers(embedded, attention_mask, std::move(ctx), output_attentions));
}

EncoderOutput BertModelImpl::pooled(EncoderOutput out) {
  if (pooler) out.pooler_output = pooler(out.last_hidden_state);
  return out;
}

EncoderOutput BertModelImpl::run_layers(const torch::Tensor& embedded, const torch::Tensor& attention_mask,
                                        EncoderContext ctx, bool output_attentions) {
  // In the dtype of the attention scores (autocast's under autocast), so that
  // no layer casts it again: not SDPA's mask, not the relative-position op,
  // and adding it does not promote bf16 scores and their softmax to float32.
  ctx.attention_bias = attention_bias_from_mask(attention_mask, autocast_dtype_of(embedded));
  encoder->add_relative_positions(ctx, embedded.size(1), embedded.device());
  ctx.output_attentions = output_attentions;
  if (config_.emd_layers == 0) return encoder(embedded, ctx);
  // EMD takes the last layer's place (enhanced_mask_decoder.h).
  const int64_t layers = static_cast<int64_t>(encoder->layer->size());
  auto& last = *encoder->layer[layers - 1]->as<BertLayer>();
  return enhanced_mask_decoder(last, encoder->forward(embedded, ctx, layers - 1),
                               embeddings->absolute_positions(embedded.size(1)), config_.emd_layers, ctx);
}

void BertModelImpl::initialize_weights() { initialize_bert_style(*this, config_.initializer_range); }

}  // namespace mtbert
