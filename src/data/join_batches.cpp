#include "data/join_batches.h"

#include <algorithm>

#include <torch/torch.h>

#include "core/internal_error.h"

namespace mtbert {

namespace {

// [B, n] -> [B, length], the new columns `fill`.
torch::Tensor pad_columns(const torch::Tensor& t, int64_t length, int64_t fill) {
  const int64_t missing = length - t.size(1);
  if (missing == 0) return t;
  return torch::cat({t, torch::full({t.size(0), missing}, fill, t.options())}, 1);
}

}  // namespace

JoinedBatch join_batches(const std::vector<const TaskBatch*>& batches) {
  check_invariant(!batches.empty(), "join_batches: no batches");
  int64_t length = 0;
  for (const auto* b : batches) {
    check_invariant(b->size() > 0 && !b->segments.empty(), "join_batches: the batch of {} is empty", b->task);
    for (const auto& s : b->segments) length = std::max(length, s.input_ids.size(1));
  }
  JoinedBatch joined;
  std::vector<torch::Tensor> ids, masks, types;
  int64_t row = 0;
  for (const auto* b : batches) {
    JoinedPart part{b->task, row, b->size(), static_cast<int64_t>(b->segments.size())};
    for (const auto& s : b->segments) {
      check_invariant(s.input_ids.size(0) == part.rows, "join_batches: a segment of {} has {} rows, not {}", b->task,
                      s.input_ids.size(0), part.rows);
      ids.push_back(pad_columns(s.input_ids, length, b->pad_id));
      masks.push_back(pad_columns(s.attention_mask, length, 0));
      types.push_back(pad_columns(s.token_type_ids.defined() ? s.token_type_ids : torch::zeros_like(s.input_ids),
                                  length, 0));
    }
    row += part.all_rows();
    joined.parts.push_back(std::move(part));
  }
  joined.tokens = {torch::cat(ids), torch::cat(masks), torch::cat(types)};
  return joined;
}

}  // namespace mtbert
