#pragma once
// AdamW whose step is one pass over each parameter: LibTorch 1.13's AdamW
// (like torch.optim.AdamW without foreach/fused) takes about ten tensor
// operations per parameter (decay, two moment updates, sqrt, division,
// epsilon, the update), each a pass over memory and two of them allocating a
// temporary the size of the parameter. FusedAdamW reads parameter, gradient
// and both moments once and writes them back once, in parallel.
//
// It is a torch::optim::AdamW: same options, same per-parameter state
// (AdamWParamState: step, exp_avg, exp_avg_sq), same serialization, so
// checkpoints move freely between the two and the LR schedule sets its
// groups' LR the same way. The arithmetic is LibTorch's, in float, in the same
// order (results agree to float rounding; LibTorch's vector kernels may fuse a
// multiply-add). Parameters on a GPU take foreach_step instead: the same
// arithmetic as one tensor operation over all the parameters of a group at a
// time (a few kernel launches per group, where AdamW::step launches about ten
// per parameter: 2,000 for bert-base). What neither serves (amsgrad, sparse
// gradients, parameters on several devices) is left to AdamW::step.
#include <vector>

#include <torch/optim/adamw.h>

namespace mtbert {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  torch::Tensor step(LossClosure closure = nullptr) override;

  // Makes the state of every parameter that has none yet (step 0, zero
  // moments), so that no step allocates: its tensors keep their addresses
  // from the first step on, as a captured CUDA graph needs. A parameter that
  // never gets a gradient keeps step 0 and is never moved.
  void create_state();

  // The step of parameters on a GPU: AdamW's arithmetic, in AdamW's order,
  // through LibTorch's foreach operations (at::_foreach_*), each over all the
  // parameters of a group that share a step count. Public so that tests run
  // it on the CPU against AdamW.
  void foreach_step();

 private:
  // The parameter's state, created (step 0, zero moments) when absent.
  torch::optim::AdamWParamState& state_of(const torch::Tensor& p);
};

}  // namespace mtbert
