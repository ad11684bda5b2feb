#pragma once
// A tiny DeBERTa-v3-style configuration (log buckets, shared position keys,
// LayerNorm-ed relative embeddings, no absolute positions), dropout off: the
// model the DeBERTa module tests build from random weights.
#include "models/model_config.h"

namespace mtbert::test {

inline ModelConfig small_deberta_config() {
  ModelConfig c;
  c.model_type = "deberta-v2";
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 24;
  c.max_position_embeddings = 32;
  c.type_vocab_size = 0;
  c.layer_norm_eps = 1e-7;
  c.relative_attention = true;
  c.position_buckets = 8;
  c.max_relative_positions = 20;
  c.pos_att_type = {"p2c", "c2p"};
  c.share_att_key = true;
  c.norm_rel_ebd = "layer_norm";
  c.position_biased_input = false;
  c.hidden_dropout_prob = 0;
  c.attention_probs_dropout_prob = 0;
  return c;
}

}  // namespace mtbert::test
