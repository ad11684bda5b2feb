#include "dist/gradient_reducer.h"

#include <torch/torch.h>

#include "core/internal_error.h"
#include "dist/communicator.h"

namespace mtbert {

GradientReducer::GradientReducer(Communicator& comm, std::vector<torch::Tensor> parameters, int64_t bucket_bytes)
    : comm_(comm), parameters_(std::move(parameters)), bucket_bytes_(std::max<int64_t>(bucket_bytes, 1)) {}

void GradientReducer::all_reduce_mean(torch::Tensor& flat) {
  comm_.all_reduce_sum(flat);
  flat.div_(comm_.world_size());
  ++calls_;
  bytes_ += flat.numel() * static_cast<int64_t>(flat.element_size());
}

std::vector<size_t> GradientReducer::with_gradients() {
  std::vector<int32_t> defined;
  for (const auto& p : parameters_) defined.push_back(p.grad().defined() ? 1 : 0);
  auto mask = torch::tensor(defined, torch::kInt).to(comm_.device());
  comm_.all_reduce_max(mask);
  ++calls_;
  bytes_ += mask.numel() * static_cast<int64_t>(mask.element_size());
  mask = mask.cpu();
  const auto flags = mask.accessor<int32_t, 1>();
  std::vector<size_t> out;
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (flags[static_cast<int64_t>(i)] != 0) out.push_back(i);
  return out;
}

void GradientReducer::average_gradients() {
  if (parameters_.empty()) return;
  torch::NoGradGuard no_grad;
  // Buckets hold one dtype; a new one starts when the next parameter would
  // overflow it (a parameter larger than a bucket gets one of its own).
  std::vector<std::vector<size_t>> buckets;
  int64_t filled = 0;
  for (size_t i : with_gradients()) {
    const auto& p = parameters_[i];
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    if (buckets.empty() || filled + bytes > bucket_bytes_ ||
        parameters_[buckets.back().front()].scalar_type() != p.scalar_type()) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(i);
    filled += bytes;
  }
  for (const auto& bucket : buckets) {
    std::vector<torch::Tensor> pieces;
    for (size_t i : bucket) {
      auto& p = parameters_[i];
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      pieces.push_back(p.grad().reshape({-1}));
    }
    auto flat = torch::cat(pieces);
    all_reduce_mean(flat);
    int64_t offset = 0;
    for (size_t i : bucket) {
      auto& p = parameters_[i];
      p.mutable_grad().copy_(flat.narrow(0, offset, p.numel()).view_as(p));
      offset += p.numel();
    }
  }
}

void GradientReducer::average_flat(torch::Tensor& flat) {
  check_invariant(flat.dim() == 1 && flat.is_contiguous(), "average_flat needs a contiguous 1-d tensor");
  torch::NoGradGuard no_grad;
  const int64_t chunk = std::max<int64_t>(1, bucket_bytes_ / static_cast<int64_t>(flat.element_size()));
  for (int64_t offset = 0; offset < flat.numel(); offset += chunk) {
    auto piece = flat.narrow(0, offset, std::min(chunk, flat.numel() - offset));  // a view: reduced in place
    all_reduce_mean(piece);
  }
}

}  // namespace mtbert
