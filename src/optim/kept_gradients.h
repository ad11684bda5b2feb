#pragma once
// The gradients of a model's trainable parameters between optimizer steps:
// kept and zeroed in place after each step rather than dropped (set to
// none), so that backward accumulates into the same buffers every step: no
// allocation, and the fixed addresses a captured CUDA graph needs. On the
// CPU it costs nothing measurable: the multi-task step (small, N = 64, fp32)
// ran at 1.00x and 0.999x of the set-to-none step, paired runs of 16 and 24
// steps with 2 and 1 threads on this project's 2-core AMD EPYC.
//
// The step still sees what the set-to-none reset showed it, which matters:
// AdamW skips a parameter without a gradient but keeps moving one with a
// zero gradient on its momentum and decay, so a task head that was not
// sampled in a step must have none, or it would still be updated, and a
// resumed run (whose gradients start undefined) would diverge from an
// uninterrupted one. Hence a record of which parameters the step's backward
// passes reached, kept on the host by a hook on each parameter (autograd
// calls it when it accumulates into the parameter's gradient: it reads no
// tensor), and set_aside_unreached(), which takes the zero gradient off
// every parameter the step did not reach until clear() gives it back.
#include <vector>

#include <torch/types.h>

namespace mtbert {

class KeptGradients {
 public:
  explicit KeptGradients(std::vector<torch::Tensor> parameters);
  ~KeptGradients();
  KeptGradients(const KeptGradients&) = delete;
  KeptGradients& operator=(const KeptGradients&) = delete;

  // After the step's backward passes, before anything reads the gradients
  // (the data-parallel reducer, PCGrad, clipping, the optimizer): the
  // parameters the passes did not reach have no gradient.
  void set_aside_unreached();
  // After the optimizer: every gradient zeroed in place, those set aside
  // given back, the record emptied for the next step. It is zero() and then
  // give_back(): a step captured in a CUDA graph (train/step_graphs.h) runs
  // the first inside the graph (device work) and the second after it (host
  // bookkeeping, which a replay does not repeat).
  void clear();
  void zero();
  void give_back();

  // The record itself, for a captured pass: a replay runs no hooks, so the
  // capture takes the flags its backward set (take_reached: the flags so far,
  // the record emptied) and each replay marks them again (mark_reached: ORed
  // in).
  std::vector<char> take_reached();
  void mark_reached(const std::vector<char>& flags);

 private:
  std::vector<torch::Tensor> parameters_;
  std::vector<char> reached_;  // per parameter, written by its hook
  std::vector<torch::Tensor> set_aside_;
  std::vector<unsigned> hooks_;
};

}  // namespace mtbert
