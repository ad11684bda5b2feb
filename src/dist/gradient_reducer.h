#pragma once
// Averages gradients over data-parallel ranks with few, large all-reduce
// calls: the gradients are copied into flat buckets of about `bucket_bytes`
// (parameters in a fixed order, each in one bucket; PyTorch DDP's 25 MB by
// default), each bucket is summed over ranks in one call, divided by the
// world size and copied back.
//
// A parameter without a gradient on every rank (the head of a task no rank
// trained this step) keeps none, as in a single process, where AdamW then
// leaves it alone; one without a gradient on some ranks only (a rank whose
// share of the batch was empty) counts as zeros there. Which is which takes
// one small all-reduce of a mask per step.
//
// The all-reduce runs after the backward pass, not overlapped with it: on
// CPU the ranks share the cores the backward pass uses, so there is no idle
// time for communication to hide in.
#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace mtbert {

class Communicator;

class GradientReducer {
 public:
  GradientReducer(Communicator& comm, std::vector<torch::Tensor> parameters, int64_t bucket_bytes);

  // The parameters' .grad, averaged over ranks.
  void average_gradients();
  // A flat tensor (a PCGrad task gradient), averaged in place, in chunks of
  // the bucket size.
  void average_flat(torch::Tensor& flat);

  // All-reduce calls and bytes since the last reset (the mask's included).
  int64_t calls() const { return calls_; }
  int64_t bytes() const { return bytes_; }
  void reset_counts() { calls_ = bytes_ = 0; }

 private:
  void all_reduce_mean(torch::Tensor& flat);
  // The positions of the parameters with a gradient on any rank.
  std::vector<size_t> with_gradients();

  Communicator& comm_;
  std::vector<torch::Tensor> parameters_;
  int64_t bucket_bytes_;
  int64_t calls_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace mtbert
