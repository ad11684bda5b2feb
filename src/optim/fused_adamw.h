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
// multiply-add). Steps that it cannot fuse (a parameter, gradient or moment
// that is not a contiguous float32 CPU tensor, or amsgrad) are left to
// AdamW::step, for all parameters of that step.
#include <vector>

#include <torch/optim/adamw.h>

namespace mtbert {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace mtbert
