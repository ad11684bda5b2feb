#pragma once
// join_batches: the batches of one training step's tasks as one encoder input
// (core/joined_batch.h). Pure: CPU tensors in, CPU tensors out.
#include <vector>

#include "core/joined_batch.h"
#include "data/batching.h"

namespace mtbert {

// Every segment of every batch padded to the longest segment among them (with
// the batch's own pad id, mask 0, token type 0) and stacked in order: batch 0's
// segments, then batch 1's, ... Batches must not be empty; token_type_ids are
// zeros where a batch has none.
JoinedBatch join_batches(const std::vector<const TaskBatch*>& batches);

}  // namespace mtbert
