#include "models/encoder_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

void check_ids(const torch::Tensor& t, const char* name, const std::vector<int64_t>& shape, int64_t limit,
               const char* limit_name, const std::string& where) {
  if (t.scalar_type() != torch::kLong)
    throw UserError(fmt::format("{}: {} must be int64, got {}", where, name, c10::toString(t.scalar_type())));
  if (t.sizes().vec() != shape)
    throw UserError(fmt::format("{}: {} has shape {}, expected {}", where, name, t.sizes(), shape));
  if (t.numel() == 0) return;
  const int64_t lo = t.min().item<int64_t>(), hi = t.max().item<int64_t>();
  if (lo < 0 || hi >= limit)
    throw UserError(fmt::format("{}: {} holds values in [{}, {}], outside the model's {} of {}", where, name, lo, hi,
                                limit_name, limit));
}

}  // namespace

TokenBatch check_encoder_inputs(TokenBatch in, const ModelConfig& config, const std::string& where) {
  if (!in.input_ids.defined()) throw UserError(fmt::format("{}: input_ids is missing", where));
  if (in.input_ids.dim() != 2)
    throw UserError(fmt::format("{}: input_ids must be 2-D [batch, length], got shape {}", where, in.input_ids.sizes()));
  const std::vector<int64_t> shape = in.input_ids.sizes().vec();
  if (shape[0] < 1 || shape[1] < 1)
    throw UserError(fmt::format("{}: input_ids has shape {}: a batch needs at least one sequence of at least one "
                                "token",
                                where, in.input_ids.sizes()));
  check_ids(in.input_ids, "input_ids", shape, config.vocab_size, "vocabulary", where);
  if (shape[1] > config.max_position_embeddings)
    throw UserError(fmt::format("{}: sequences of length {} exceed max_position_embeddings {}", where, shape[1],
                                config.max_position_embeddings));

  if (!in.attention_mask.defined()) {
    in.attention_mask = torch::ones_like(in.input_ids);
  } else {
    if (in.attention_mask.is_floating_point() || in.attention_mask.is_complex())
      throw UserError(fmt::format("{}: attention_mask must be an integer or bool tensor, got {}", where,
                                  c10::toString(in.attention_mask.scalar_type())));
    in.attention_mask = in.attention_mask.to(torch::kLong);
    check_ids(in.attention_mask, "attention_mask", shape, 2, "0/1 range", where);
  }
  if (in.token_type_ids.defined() && config.type_vocab_size == 0) {
    // DeBERTa-v3 has no token types; HF's DebertaV2Embeddings ignores the ones
    // its tokenizer produces, and so do we.
    in.token_type_ids = torch::Tensor();
  }
  if (in.token_type_ids.defined()) {
    check_ids(in.token_type_ids, "token_type_ids", shape, config.type_vocab_size, "type_vocab_size", where);
  }
  return in;
}

}  // namespace mtbert
