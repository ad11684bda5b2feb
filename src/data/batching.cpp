#include "data/batching.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/internal_error.h"
#include "core/portable_random.h"
#include "core/user_error.h"

namespace mtbert {

std::vector<TokenBatch> TaskBatch::segments_on(torch::Device device) const {
  std::vector<TokenBatch> on_device;
  on_device.reserve(segments.size());
  for (const auto& segment : segments) on_device.push_back(segment.to(device));
  return on_device;
}

TokenBatch to_tensors(const PaddedBatch& batch) {
  auto make = [&](const std::vector<int64_t>& v) {
    return torch::tensor(v, torch::kLong).view({batch.batch, batch.length});
  };
  const bool padded = std::find(batch.attention_mask.begin(), batch.attention_mask.end(), 0) != batch.attention_mask.end();
  return {make(batch.ids), make(batch.attention_mask), make(batch.token_type_ids), padded};
}

namespace {

void check_options(const BatchingOptions& options) {
  if (options.batch_size <= 0) {
    throw UserError(fmt::format("batch_size must be positive, not {}", options.batch_size));
  }
  if (options.bucket_by_length && options.bucket_pool_batches <= 0) {
    throw UserError(fmt::format("bucket_pool_batches must be positive, not {}", options.bucket_pool_batches));
  }
}

// Consecutive runs of `size` positions of `order` (the last one shorter).
void cut_into_batches(const std::vector<int64_t>& order, std::size_t begin, std::size_t end, int64_t size,
                      std::vector<std::vector<int64_t>>& batches) {
  for (std::size_t i = begin; i < end; i += static_cast<std::size_t>(size)) {
    const std::size_t stop = std::min(end, i + static_cast<std::size_t>(size));
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(stop));
  }
}

}  // namespace

std::vector<std::vector<int64_t>> plan_batches(const EncodedSplit& split, const BatchingOptions& options,
                                               int64_t pass) {
  check_options(options);
  const auto& examples = split.examples;
  std::vector<int64_t> order(examples.size());
  std::iota(order.begin(), order.end(), 0);
  auto by_length = [&](int64_t a, int64_t b) { return examples[a].length < examples[b].length; };
  std::vector<std::vector<int64_t>> batches;

  if (!options.shuffle) {
    // Longest first: the largest batch comes first, so a batch size that does
    // not fit in memory fails at once rather than at the end of an evaluation.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return by_length(b, a); });
    cut_into_batches(order, 0, order.size(), options.batch_size, batches);
    return batches;
  }

  std::mt19937_64 rng = seeded_generator(options.seed, static_cast<uint64_t>(pass));
  portable_shuffle(order, rng);
  if (!options.bucket_by_length) {
    cut_into_batches(order, 0, order.size(), options.batch_size, batches);
    return batches;
  }
  // Pools are whole numbers of batches, so only the very last batch can be
  // short. Sorting within a pool (stable: ties keep their shuffled order)
  // groups similar lengths while the pools keep batches random across passes.
  const std::size_t pool = static_cast<std::size_t>(options.batch_size * options.bucket_pool_batches);
  for (std::size_t begin = 0; begin < order.size(); begin += pool) {
    const std::size_t end = std::min(order.size(), begin + pool);
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(begin), order.begin() + static_cast<std::ptrdiff_t>(end),
                     by_length);
    cut_into_batches(order, begin, end, options.batch_size, batches);
  }
  // Without this, each pool's batches would run from short to long.
  portable_shuffle(batches, rng);
  return batches;
}

TaskBatch make_batch(const EncodedSplit& split, const std::vector<int64_t>& indices) {
  check_invariant(!indices.empty(), "make_batch: no examples selected");
  const int64_t n = static_cast<int64_t>(split.examples.size());
  for (int64_t i : indices) {
    check_invariant(i >= 0 && i < n, "make_batch: example {} of a split of {}", i, n);
  }
  TaskBatch batch;
  batch.task = split.task;
  batch.indices = indices;
  batch.global_size = batch.size();
  batch.pad_id = split.pad_id;
  for (int64_t s = 0; s < split.segments; ++s) {
    std::vector<Encoding> rows;
    rows.reserve(indices.size());
    for (int64_t i : indices) rows.push_back(split.examples[static_cast<std::size_t>(i)].segments.at(s));
    batch.segments.push_back(to_tensors(pad_batch(rows, split.pad_id)));
  }
  if (split.labeled) {
    std::vector<float> labels;
    labels.reserve(indices.size());
    for (int64_t i : indices) labels.push_back(static_cast<float>(split.examples[static_cast<std::size_t>(i)].label));
    batch.labels = torch::tensor(labels, torch::kFloat);
  }
  return batch;
}

std::vector<int64_t> batch_shard(const std::vector<int64_t>& indices, int64_t shard, int64_t shards) {
  check_invariant(shards > 0 && shard >= 0 && shard < shards, "batch_shard: shard {} of {}", shard, shards);
  const auto n = static_cast<int64_t>(indices.size());
  const int64_t begin = shard * n / shards, end = (shard + 1) * n / shards;
  return {indices.begin() + begin, indices.begin() + end};
}

BatchStream::BatchStream(const EncodedSplit& split, BatchingOptions options)
    : split_(&split), options_(options) {
  if (split.examples.empty()) {
    throw UserError(fmt::format("task {} has no training examples to draw batches from", split.task));
  }
  plan_ = plan_batches(*split_, options_, state_.pass);
}

int64_t BatchStream::batches_per_pass() const { return static_cast<int64_t>(plan_.size()); }

TaskBatch BatchStream::next() {
  if (state_.cursor >= batches_per_pass()) {
    ++state_.pass;
    state_.cursor = 0;
    plan_ = plan_batches(*split_, options_, state_.pass);
  }
  const auto& whole = plan_[static_cast<std::size_t>(state_.cursor++)];
  if (options_.shards == 1) return make_batch(*split_, whole);
  const auto shard = batch_shard(whole, options_.shard, options_.shards);
  TaskBatch batch;
  if (shard.empty()) {
    batch.task = split_->task;
  } else {
    batch = make_batch(*split_, shard);
  }
  batch.global_size = static_cast<int64_t>(whole.size());
  return batch;
}

void BatchStream::restore(State state) {
  if (state.pass < 0 || state.cursor < 0 || state.cursor > batches_per_pass()) {
    throw UserError(fmt::format(
        "cannot resume the batches of task {} at pass {}, batch {}: a pass has {} batches (was the checkpoint "
        "written with another batch size or data?)",
        split_->task, state.pass, state.cursor, batches_per_pass()));
  }
  state_ = state;
  plan_ = plan_batches(*split_, options_, state_.pass);
}

}  // namespace mtbert
