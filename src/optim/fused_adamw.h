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
// checkpoints move freely between the two. The arithmetic is LibTorch's, in
// float, in the same order (results agree to float rounding; LibTorch's
// vector kernels may fuse a multiply-add). Parameters on a GPU take
// device_step instead. What neither serves (amsgrad, sparse gradients,
// parameters on several devices) is left to AdamW::step.
//
// Nothing in a step waits on the host, so that a GPU can capture it in a
// graph: each parameter's step count and each group's learning rate are
// tensors on the parameters' device (the step count a float, as
// at::_fused_adamw_ reads it), the counts go up by a tensor operation and the
// bias corrections are computed from them on the device. Those tensors are
// the truth; AdamWParamState::step is brought up to date from them when the
// optimizer is saved (one host read), and they are set from it when one is
// loaded, so a checkpoint still holds the int64 step counts AdamW reads.
#include <vector>

#include <torch/optim/adamw.h>

namespace mtbert {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

  // Makes the state of every parameter that has none yet (step 0, zero
  // moments) and the step and LR tensors, so that no step allocates: its
  // tensors keep their addresses from the first step on, as a captured CUDA
  // graph needs. A parameter that never gets a gradient keeps step 0 and is
  // never moved.
  void create_state();

  // Group `group`'s learning rate: its options' (what a checkpoint and
  // AdamW::step read) and the tensor the step reads, written in place
  // (fill_: no tensor made on the host). The only way to change an LR: the
  // step refuses one set on the options alone.
  void set_lr(size_t group, double lr);

  // Brings every AdamWParamState::step up to date with the step tensors (one
  // host read): save() calls it, and whoever reads state() directly must.
  void sync_state_steps() const;

  // The step of parameters on a GPU: at::_fused_adamw_ with the LR as a
  // tensor where the LibTorch has it (2.1 on), otherwise AdamW's operations
  // per parameter, in AdamW's order, with the scalars as tensors (slow: a
  // dozen launches per parameter, but no host round trip). Public so that
  // tests run it on the CPU against AdamW.
  void device_step();

 private:
  // The parameter's state, created (step 0, zero moments) when absent.
  torch::optim::AdamWParamState& state_of(const torch::Tensor& p);
  // Makes the step and LR tensors on the first parameter's device, once.
  void create_scalars();
  // Sets the step tensors from the AdamWParamState steps (0 without state).
  void load_steps_from_state();
  void check_lrs_set() const;

  // Every parameter's step count, in the order of param_groups() and their
  // params(), as one float tensor (one host read when saving) and as a 0-d
  // view per parameter (what at::_fused_adamw_ takes).
  torch::Tensor steps_;
  std::vector<torch::Tensor> step_views_;
  // Per group, its LR as a 0-d tensor (double on the CPU, which keeps the
  // CPU step's arithmetic bit for bit what it was with host scalars; float
  // elsewhere, as at::_fused_adamw_ reads it) and the value last set.
  std::vector<torch::Tensor> lrs_;
  std::vector<double> lr_values_;
};

}  // namespace mtbert
