#pragma once
// A head of every kind and a batch for each, of different sizes and lengths:
// the inputs of the tests that one encoder pass over several tasks' batches
// gives what each task's own pass gives.
#include <string>
#include <vector>

#include <torch/torch.h>

#include "data/batching.h"
#include "models/head_spec.h"
#include "support/tiny_multitask.h"

namespace mtbert::test {

// Every target, pair mode, siamese combination, cosine map, pooling and the
// sentence projection, each in at least one head.
inline std::vector<HeadSpec> every_head_kind() {
  std::vector<HeadSpec> heads = {
      head_spec("cls5", TaskTarget::classes, 5),
      head_spec("crossbin", TaskTarget::binary, 0, PairMode::cross, PairCombine::concat, Pooling::mean),
      head_spec("crossreg", TaskTarget::regression, 0, PairMode::cross, PairCombine::concat, Pooling::pooler),
      head_spec("siaconcat", TaskTarget::classes, 3, PairMode::siamese, PairCombine::concat, Pooling::mean),
      head_spec("siauv", TaskTarget::binary, 0, PairMode::siamese, PairCombine::uv, Pooling::cls),
      head_spec("cosreg", TaskTarget::regression, 0, PairMode::siamese, PairCombine::cosine, Pooling::pooler),
      head_spec("cosbin", TaskTarget::binary, 0, PairMode::siamese, PairCombine::cosine, Pooling::mean),
  };
  heads[3].sentence_projection = true;
  heads[5].cosine_map = CosineMap::relu;
  heads[6].cosine_map = CosineMap::shifted;
  return heads;
}

// One labeled batch per head: head k has 2 + k % 3 rows, and its segments are
// 4 + k and 9 - k tokens long (the second one for siamese heads), or with
// `close_lengths` 10 + k % 2 and 11 - k % 2 (a joint pass pads them by under
// 10%), padded within as tiny_batch pads.
inline std::vector<TaskBatch> batch_per_head(const std::vector<HeadSpec>& heads, uint64_t seed,
                                             bool close_lengths = false) {
  torch::manual_seed(seed);
  std::vector<TaskBatch> batches;
  for (size_t k = 0; k < heads.size(); ++k) {
    const auto& h = heads[k];
    TaskBatch b;
    b.task = h.task;
    const int64_t rows = 2 + static_cast<int64_t>(k % 3);
    const auto k2 = static_cast<int64_t>(k % 2);
    b.segments.push_back(tiny_batch(rows, close_lengths ? 10 + k2 : 4 + static_cast<int64_t>(k)));
    if (h.pair_mode == PairMode::siamese)
      b.segments.push_back(tiny_batch(rows, close_lengths ? 11 - k2 : 9 - static_cast<int64_t>(k)));
    if (h.target == TaskTarget::classes) b.labels = torch::randint(0, h.num_classes, {rows}).to(torch::kFloat);
    else if (h.target == TaskTarget::binary) b.labels = torch::randint(0, 2, {rows}).to(torch::kFloat);
    else b.labels = torch::rand({rows}) * 5;
    for (int64_t i = 0; i < rows; ++i) b.indices.push_back(i);
    b.global_size = rows;
    batches.push_back(std::move(b));
  }
  return batches;
}

}  // namespace mtbert::test
