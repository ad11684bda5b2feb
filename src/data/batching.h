#pragma once
// Batches of one task: length-bucketed with dynamic padding for training (SST
// sentences average about 25 word pieces; padding every batch to 128 wastes
// most of the compute), length-sorted for evaluation, and an endless,
// resumable stream of training batches, pass after pass.
#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "core/token_batch.h"
#include "data/encoded_split.h"

namespace mtbert {

struct TaskBatch {
  std::string task;
  std::vector<TokenBatch> segments;  // as EncodedSplit::segments, each padded to its own longest row
  torch::Tensor labels;              // [B] float64 -> float32 (class index, 0/1 or score); undefined if unlabeled
  std::vector<int64_t> indices;      // positions of the rows in the split, for predictions
  // The examples of the whole batch, every data-parallel shard together
  // (size() when unsharded). A shard may be empty: no segments, no labels.
  int64_t global_size = 0;
  int64_t pad_id = 0;  // the tokenizer's padding id, under mask 0
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
  // The segments as the model takes them, on its device.
  std::vector<TokenBatch> segments_on(torch::Device device) const;
};

// Padded token ids as tensors.
TokenBatch to_tensors(const PaddedBatch& batch);

struct BatchingOptions {
  int64_t batch_size = 16;
  bool shuffle = true;
  // Group examples of similar length: shuffle, cut into pools of
  // `bucket_pool_batches` batches, sort each pool by length, cut into batches,
  // shuffle the batches. false: plain shuffled batches.
  bool bucket_by_length = true;
  int64_t bucket_pool_batches = 50;
  uint64_t seed = 0;
  // Data-parallel ranks: batches are planned at batch_size (the global batch)
  // and BatchStream::next() gives shard `shard` of `shards` contiguous,
  // near-equal parts of each, so that the ranks together see exactly the
  // batches one process would.
  int64_t shards = 1;
  int64_t shard = 0;
};

// The batches (lists of example positions) of pass `pass` over the split: a
// pure function of (split sizes, options, pass), which is what makes resuming
// exact. Without shuffle, examples are sorted by length (evaluation: least
// padding), and every example appears exactly once either way.
std::vector<std::vector<int64_t>> plan_batches(const EncodedSplit& split, const BatchingOptions& options,
                                               int64_t pass);

// Pads the selected examples into tensors (CPU).
TaskBatch make_batch(const EncodedSplit& split, const std::vector<int64_t>& indices);

// Part `shard` of `shards` of a batch's example positions: contiguous, sizes
// differing by at most one, empty when the batch has fewer examples than shards.
std::vector<int64_t> batch_shard(const std::vector<int64_t>& indices, int64_t shard, int64_t shards);

// Training batches of one task, pass after pass, reshuffled each pass (this
// rank's shard of each, see BatchingOptions::shards).
class BatchStream {
 public:
  struct State {
    int64_t pass = 0;
    int64_t cursor = 0;  // next batch within the pass
  };

  BatchStream(const EncodedSplit& split, BatchingOptions options);

  TaskBatch next();
  int64_t batches_per_pass() const;
  State state() const { return state_; }
  void restore(State state);

 private:
  const EncodedSplit* split_;
  BatchingOptions options_;
  State state_;
  std::vector<std::vector<int64_t>> plan_;  // of state_.pass
};

}  // namespace mtbert
