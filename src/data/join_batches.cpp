#include "data/join_batches.h"

#include <algorithm>
#include <numeric>

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
  bool padded = false;  // by a batch itself or by the joining
  int64_t row = 0;
  for (const auto* b : batches) {
    JoinedPart part{b->task, row, b->size(), static_cast<int64_t>(b->segments.size())};
    for (const auto& s : b->segments) {
      check_invariant(s.input_ids.size(0) == part.rows, "join_batches: a segment of {} has {} rows, not {}", b->task,
                      s.input_ids.size(0), part.rows);
      padded = padded || s.padded || s.input_ids.size(1) < length;
      ids.push_back(pad_columns(s.input_ids, length, b->pad_id));
      masks.push_back(pad_columns(s.attention_mask, length, 0));
      types.push_back(pad_columns(s.token_type_ids.defined() ? s.token_type_ids : torch::zeros_like(s.input_ids),
                                  length, 0));
    }
    row += part.all_rows();
    joined.parts.push_back(std::move(part));
  }
  joined.tokens = {torch::cat(ids), torch::cat(masks), torch::cat(types), padded};
  return joined;
}

TokenBatch pad_to_length(const TokenBatch& batch, int64_t length, int64_t pad_id) {
  const int64_t own = batch.input_ids.size(1);
  check_invariant(length >= own, "pad_to_length: {} columns asked of a batch of {}", length, own);
  if (length == own) return batch;
  return {pad_columns(batch.input_ids, length, pad_id), pad_columns(batch.attention_mask, length, 0),
          batch.token_type_ids.defined() ? pad_columns(batch.token_type_ids, length, 0) : batch.token_type_ids,
          /*padded=*/true};
}

TokenBatch pad_to_multiple(const TokenBatch& batch, int64_t multiple, int64_t positions, int64_t pad_id) {
  check_invariant(multiple > 0, "pad_to_multiple: a multiple of {}", multiple);
  const int64_t own = batch.input_ids.size(1);
  return pad_to_length(batch, std::max(own, std::min((own + multiple - 1) / multiple * multiple, positions)), pad_id);
}

std::vector<std::vector<size_t>> group_by_length(const std::vector<const TaskBatch*>& batches, double max_padding) {
  struct Shape {
    size_t index;
    int64_t length = 0;  // the longest segment
    int64_t rows = 0;    // examples x segments
    int64_t tokens = 0;  // under its own padding
  };
  std::vector<Shape> shapes;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (batches[i]->size() == 0) continue;
    Shape s{i};
    for (const auto& segment : batches[i]->segments) {
      s.length = std::max(s.length, segment.input_ids.size(1));
      s.rows += segment.input_ids.size(0);
      s.tokens += segment.input_ids.numel();
    }
    shapes.push_back(s);
  }
  std::stable_sort(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) { return a.length < b.length; });
  std::vector<std::vector<size_t>> groups;
  int64_t rows = 0, tokens = 0;
  for (const auto& s : shapes) {
    const bool joins = !groups.empty() && static_cast<double>(s.length * (rows + s.rows)) <=
                                              (1 + max_padding) * static_cast<double>(tokens + s.tokens);
    if (!joins) {
      groups.emplace_back();
      rows = tokens = 0;
    }
    groups.back().push_back(s.index);
    rows += s.rows;
    tokens += s.tokens;
  }
  return groups;
}

}  // namespace mtbert
