#pragma once
// Where a training step's inputs live on its device: in buffers kept from
// step to step, one per input of the step and shape, instead of a fresh
// device tensor per batch.
//
// A step hands its inputs over in the same order every time (the batches of
// its passes, each one's token tensors and labels), so the k-th input of a
// step of the same shapes lands at the same address every step: the fixed
// addresses a captured CUDA graph replays from, and no allocation that
// depends on the data inside the step. A buffer is kept for every input
// number and shape met, so the inputs given must take few shapes: a batch's
// rows and its padded length (at most the task's max_length), not a count
// that the data decides anew each batch (a masked-LM batch's chosen
// positions, which MlmStep copies plainly).
//
// On a GPU the copy goes through pinned memory, asynchronously, on the
// step's stream: a buffer's next copy is queued after every kernel of the
// step before that reads it. On a CPU, a batch's tensors already are where
// the step reads them: they are used as they are (copying them would only
// add work), unless the buffers are asked for (`keep_buffers`).
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include <torch/types.h>

#include "core/token_batch.h"

namespace mtbert {

class StepInputs {
 public:
  // keep_buffers: copy into the kept buffers even where the inputs already
  // are on `device`.
  StepInputs(torch::Device device, bool keep_buffers);

  // After the step's last input: the next step's are numbered from 0 again.
  void end_step() { next_ = 0; }

  // `t`'s values on the device: the step's next input.
  torch::Tensor place(const torch::Tensor& t);
  TokenBatch place(const TokenBatch& batch);
  std::vector<TokenBatch> place(const std::vector<TokenBatch>& segments);

  // The buffers kept so far (tests, the log).
  size_t buffers() const { return buffers_.size(); }

 private:
  // The input's number in its step, its dtype, its shape.
  using Key = std::tuple<int64_t, int, std::vector<int64_t>>;

  torch::Device device_;
  bool copy_;
  int64_t next_ = 0;
  std::map<Key, torch::Tensor> buffers_;
};

}  // namespace mtbert
