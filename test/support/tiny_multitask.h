#pragma once
// Tiny encoders, models and batches for the tests of heads, the multi-task
// model, PCGrad and SMART: random weights under a fixed seed, no files.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "models/bert_model.h"
#include "models/multitask_model.h"

namespace mtbert::test {

inline ModelConfig tiny_config(int64_t layers = 2, double dropout = 0.0) {
  ModelConfig c;
  c.vocab_size = 40;
  c.hidden_size = 8;
  c.num_hidden_layers = layers;
  c.num_attention_heads = 2;
  c.intermediate_size = 16;
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = dropout;
  c.attention_probs_dropout_prob = dropout;
  // Ten times HF's 0.02: outputs that differ visibly between inputs, without
  // saturating softmax or attention.
  c.initializer_range = 0.2;
  return c;
}

// HuggingFace's initialization, with the spread tiny_config() sets.
inline BertModel tiny_encoder(const ModelConfig& c, bool with_pooler = true) {
  BertModel encoder(c, BertModelOptions{with_pooler});
  encoder->initialize_weights();
  return encoder;
}

inline HeadSpec head_spec(std::string task, TaskTarget target, int64_t num_classes = 0,
                          PairMode pair = PairMode::none, PairCombine combine = PairCombine::concat,
                          Pooling pooling = Pooling::cls, double dropout = 0.0) {
  HeadSpec s;
  s.task = std::move(task);
  s.target = target;
  s.num_classes = num_classes;
  s.pair_mode = pair;
  s.combine = combine;
  s.pooling = pooling;
  s.dropout = dropout;
  return s;
}

// A batch of `batch` rows of random ids (never the padding id 0) whose row b
// has its last `b` positions padded (mask 0, id 0); token types 0 then 1.
inline TokenBatch tiny_batch(int64_t batch, int64_t length, int64_t vocab = 40) {
  TokenBatch in;
  in.input_ids = torch::randint(1, vocab, {batch, length}, torch::kLong);
  in.attention_mask = torch::ones({batch, length}, torch::kLong);
  in.token_type_ids = torch::zeros({batch, length}, torch::kLong);
  in.token_type_ids.narrow(1, length / 2, length - length / 2).fill_(1);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t pad = std::min(b, length - 1);
    if (pad == 0) continue;
    in.attention_mask[b].narrow(0, length - pad, pad).fill_(0);
    in.input_ids[b].narrow(0, length - pad, pad).fill_(0);
  }
  return in;
}

}  // namespace mtbert::test
