#include "optim/pcgrad.h"

#include <torch/torch.h>

#include "core/internal_error.h"

namespace mtbert {

namespace {

// The Gram matrix G[i][j] = g_i . g_j of the task gradients, fetched to the
// host in one transfer.
std::vector<std::vector<double>> gram_matrix(const std::vector<torch::Tensor>& grads) {
  const size_t t = grads.size();
  std::vector<torch::Tensor> dots;
  for (size_t i = 0; i < t; ++i)
    for (size_t j = i; j < t; ++j) dots.push_back(torch::dot(grads[i], grads[j]));
  auto host = torch::stack(dots).to(torch::kCPU, torch::kDouble);
  auto values = host.accessor<double, 1>();
  std::vector<std::vector<double>> gram(t, std::vector<double>(t));
  int64_t k = 0;
  for (size_t i = 0; i < t; ++i)
    for (size_t j = i; j < t; ++j) gram[i][j] = gram[j][i] = values[k++];
  return gram;
}

// The weights w with update = sum_k w_k g_k. The projected g_i is kept as
// coefficients c over the original gradients: g_i^PC = sum_k c_k g_k, so
// g_i^PC . g_j = sum_k c_k G[k][j], and projecting on g_j lowers c_j by that
// dot product over G[j][j].
std::vector<double> combination_weights(const std::vector<std::vector<double>>& gram,
                                        const std::vector<std::vector<int64_t>>& orders, PcgradReduction reduction) {
  const size_t t = gram.size();
  check_invariant(orders.size() == t, "pcgrad: {} orders for {} tasks", orders.size(), t);
  std::vector<double> weights(t, 0.0);
  for (size_t i = 0; i < t; ++i) {
    check_invariant(orders[i].size() + 1 == t, "pcgrad: task {}'s order must list the {} other tasks", i, t - 1);
    std::vector<double> c(t, 0.0);
    c[i] = 1.0;
    for (int64_t j : orders[i]) {
      check_invariant(j >= 0 && static_cast<size_t>(j) < t && static_cast<size_t>(j) != i,
                      "pcgrad: bad task {} in task {}'s order", j, i);
      double dot = 0;
      for (size_t k = 0; k < t; ++k) dot += c[k] * gram[k][j];
      if (dot < 0) c[j] -= dot / gram[j][j];  // dot < 0 implies g_j != 0
    }
    for (size_t k = 0; k < t; ++k) weights[k] += c[k];
  }
  if (reduction == PcgradReduction::mean)
    for (auto& w : weights) w /= static_cast<double>(t);
  return weights;
}

torch::Tensor weighted_sum(const std::vector<torch::Tensor>& grads, const std::vector<double>& weights) {
  auto out = grads[0] * weights[0];
  for (size_t k = 1; k < grads.size(); ++k) out.add_(grads[k], weights[k]);
  return out;
}

// The surgery on flat task gradients, for pcgrad_combine and
// PcgradAccumulator::apply alike: the combined gradient, and how many
// unordered pairs of original gradients conflict (g_i . g_j < 0).
struct Surgery {
  torch::Tensor combined;
  int64_t conflicts = 0;
};

Surgery surgery(const std::vector<torch::Tensor>& grads, const std::vector<std::vector<int64_t>>& orders,
                PcgradReduction reduction) {
  check_invariant(!grads.empty(), "pcgrad: no task gradients");
  for (const auto& g : grads)
    check_invariant(g.dim() == 1 && g.sizes() == grads[0].sizes(),
                    "pcgrad: task gradients must be flat and of equal size");
  torch::NoGradGuard no_grad;
  const auto gram = gram_matrix(grads);
  Surgery s;
  for (size_t i = 0; i < gram.size(); ++i)
    for (size_t j = i + 1; j < gram.size(); ++j) s.conflicts += gram[i][j] < 0;
  s.combined = weighted_sum(grads, combination_weights(gram, orders, reduction));
  return s;
}

}  // namespace

std::vector<std::vector<int64_t>> pcgrad_orders(int64_t num_tasks, std::mt19937_64& rng) {
  std::vector<std::vector<int64_t>> orders(num_tasks);
  for (int64_t i = 0; i < num_tasks; ++i) {
    auto& order = orders[i];
    for (int64_t j = 0; j < num_tasks; ++j)
      if (j != i) order.push_back(j);
    for (int64_t k = static_cast<int64_t>(order.size()) - 1; k > 0; --k)
      std::swap(order[k], order[rng() % static_cast<uint64_t>(k + 1)]);
  }
  return orders;
}

torch::Tensor pcgrad_combine(const std::vector<torch::Tensor>& task_grads,
                             const std::vector<std::vector<int64_t>>& orders, PcgradReduction reduction) {
  return surgery(task_grads, orders, reduction).combined;
}

torch::Tensor pcgrad_combine(const std::vector<torch::Tensor>& task_grads, PcgradReduction reduction,
                             std::mt19937_64& rng) {
  return pcgrad_combine(task_grads, pcgrad_orders(static_cast<int64_t>(task_grads.size()), rng), reduction);
}

PcgradAccumulator::PcgradAccumulator(std::vector<torch::Tensor> shared_parameters) {
  for (auto& p : shared_parameters)
    if (p.requires_grad()) shared_.push_back(std::move(p));
}

void PcgradAccumulator::capture_task_gradient() {
  if (shared_.empty()) return;
  torch::NoGradGuard no_grad;
  int64_t total = 0;
  for (const auto& p : shared_) total += p.numel();
  auto flat = torch::empty({total}, shared_[0].options());
  int64_t offset = 0;
  for (auto& p : shared_) {
    auto slice = flat.narrow(0, offset, p.numel());
    if (p.grad().defined()) {
      slice.copy_(p.grad().reshape({-1}));
      p.mutable_grad().zero_();
    } else {
      slice.zero_();
    }
    offset += p.numel();
  }
  task_grads_.push_back(std::move(flat));
}

void PcgradAccumulator::apply(PcgradReduction reduction, std::mt19937_64& rng) {
  last_conflicts_ = 0;
  if (shared_.empty()) return;
  const Surgery s = surgery(task_grads_, pcgrad_orders(static_cast<int64_t>(task_grads_.size()), rng), reduction);
  last_conflicts_ = s.conflicts;
  const torch::Tensor& combined = s.combined;
  task_grads_.clear();
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (auto& p : shared_) {
    auto slice = combined.narrow(0, offset, p.numel()).view_as(p);
    if (p.grad().defined()) {
      p.mutable_grad().copy_(slice);
    } else {
      p.mutable_grad() = slice.clone();
    }
    offset += p.numel();
  }
}

}  // namespace mtbert
