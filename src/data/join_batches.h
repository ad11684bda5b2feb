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

// `batch` with columns of padding (pad_id, mask 0, token type 0) added up to
// `length` (at least its own): the length buckets of a step captured in CUDA
// graphs, which replay for one shape each. Padded when a column was added.
TokenBatch pad_to_length(const TokenBatch& batch, int64_t length, int64_t pad_id);

// `batch` padded up to its length rounded up to a multiple of `multiple`,
// but not past `positions` (the model's; a batch longer than that keeps its
// own length): the buckets that bound how many graphs a run captures.
TokenBatch pad_to_multiple(const TokenBatch& batch, int64_t multiple, int64_t positions, int64_t pad_id);

// The batches in groups worth one pass each (positions into `batches`): in
// order of length (a batch's longest segment), a batch joins the group before
// it while the group's rows padded to its length hold at most
// (1 + max_padding) times the tokens of its members' own padding. Padding
// costs what it holds where the arithmetic sets the pace (a CPU); a joint
// pass saves dispatch where the host does (a GPU). Empty batches are left out.
std::vector<std::vector<size_t>> group_by_length(const std::vector<const TaskBatch*>& batches, double max_padding);

}  // namespace mtbert
