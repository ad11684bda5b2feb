#pragma once
// mtbert::Dropout: a drop-in for torch::nn::Dropout (same constructor, no
// parameters or buffers, identity outside training) that runs
// ops::fused_dropout, the one-pass parallel dropout (see ops/fused_dropout.h
// for why and how its masks differ from LibTorch's).
#include <ostream>

#include <torch/nn/cloneable.h>

namespace mtbert {

class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
 public:
  // p in [0, 1] (a c10::Error otherwise, as torch::nn::Dropout).
  explicit DropoutImpl(double p = 0.5);

  torch::Tensor forward(const torch::Tensor& x);
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;

  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(Dropout);

}  // namespace mtbert
