#include "optim/kept_gradients.h"

#include <torch/torch.h>

namespace mtbert {

KeptGradients::KeptGradients(std::vector<torch::Tensor> parameters) : parameters_(std::move(parameters)) {
  reached_.assign(parameters_.size(), 0);
  set_aside_.resize(parameters_.size());
  for (size_t i = 0; i < parameters_.size(); ++i)
    hooks_.push_back(parameters_[i].register_hook([this, i](const torch::Tensor&) { reached_[i] = 1; }));
}

KeptGradients::~KeptGradients() {
  for (size_t i = 0; i < hooks_.size(); ++i) parameters_[i].remove_hook(hooks_[i]);
}

void KeptGradients::set_aside_unreached() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    if (reached_[i] || !parameters_[i].grad().defined()) continue;
    set_aside_[i] = parameters_[i].grad();
    parameters_[i].mutable_grad().reset();
  }
}

void KeptGradients::clear() {
  zero();
  give_back();
}

void KeptGradients::zero() {
  torch::NoGradGuard no_grad;
  for (auto& p : parameters_)
    if (p.grad().defined()) p.mutable_grad().zero_();
}

void KeptGradients::give_back() {
  for (size_t i = 0; i < parameters_.size(); ++i) {
    auto& grad = parameters_[i].mutable_grad();
    // Given back unless a gradient was made after it was set aside (PCGrad
    // and the data-parallel reducer give every parameter they handle one):
    // it is zero, as it was set aside.
    if (!grad.defined() && set_aside_[i].defined()) grad = std::move(set_aside_[i]);
    set_aside_[i].reset();
    reached_[i] = 0;
  }
}

std::vector<char> KeptGradients::take_reached() {
  std::vector<char> flags(parameters_.size(), 0);
  flags.swap(reached_);
  return flags;
}

void KeptGradients::mark_reached(const std::vector<char>& flags) {
  for (size_t i = 0; i < reached_.size() && i < flags.size(); ++i) reached_[i] |= flags[i];
}

}  // namespace mtbert
