#pragma once
// PCGrad (Yu et al. 2020, "Gradient Surgery for Multi-Task Learning") on the
// shared parameters: for each task i, in a random order over the other tasks
// j, when g_i . g_j < 0 subtract the projection of g_i on g_j, always
// projecting against the ORIGINAL task gradients g_j; the update is the sum (or
// mean) of the projected gradients. Task-specific parameters keep their own
// gradients untouched.
//
// "g_i . g_j" is the dot product of the task's gradient as projected so far
// with the original g_j (the paper's Algorithm 1). A zero g_j never conflicts.
//
// Memory: one flat gradient per task, nothing more. Every projected gradient
// is a linear combination of the original ones, so the surgery runs on their
// T x T Gram matrix (on the host, in double) and the update is one weighted
// sum of the task gradients: T(T+1)/2 dot products, one device sync, no
// per-task copies.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "config/experiment_config.h"

#include <torch/types.h>

namespace mtbert {


// The surgery itself, on flat task gradients [T][P]. `rng` chooses the order
// of the other tasks for each task (pcgrad_orders).
torch::Tensor pcgrad_combine(const std::vector<torch::Tensor>& task_grads, PcgradReduction reduction,
                             std::mt19937_64& rng);

// The same with the orders given: orders[i] lists the tasks other than i in
// the order g_i is projected on them.
torch::Tensor pcgrad_combine(const std::vector<torch::Tensor>& task_grads,
                             const std::vector<std::vector<int64_t>>& orders, PcgradReduction reduction);

// For each task, the other tasks in a random order: a Fisher-Yates shuffle
// drawing rng() % (k + 1), the same on every standard library (std::shuffle's
// draws are implementation-defined).
std::vector<std::vector<int64_t>> pcgrad_orders(int64_t num_tasks, std::mt19937_64& rng);

// Collects task gradients of the shared parameters after each task's
// backward(), then writes the combined gradient back into their .grad.
class PcgradAccumulator {
 public:
  // Parameters that do not require gradients (a frozen encoder) are left out;
  // with none left (everything shared is frozen) there is nothing to combine
  // and capture/apply do nothing.
  explicit PcgradAccumulator(std::vector<torch::Tensor> shared_parameters);

  // Call right after task t's backward(): flattens the shared parameters'
  // gradients (zeros for a parameter without one) into a new task gradient
  // and zeroes them for the next task.
  void capture_task_gradient();

  // The flat task gradients captured so far, in capture order: data-parallel
  // training averages them over ranks before apply().
  std::vector<torch::Tensor>& captured() { return task_grads_; }

  // Combines the captured gradients into the shared parameters' .grad and
  // clears the captures. Needs at least one capture.
  void apply(PcgradReduction reduction, std::mt19937_64& rng);

  // How many conflicting pairs of tasks (unordered, original gradients with
  // g_i . g_j < 0) the last apply() saw: logged.
  int64_t last_conflicts() const { return last_conflicts_; }

 private:
  std::vector<torch::Tensor> shared_;
  std::vector<torch::Tensor> task_grads_;
  int64_t last_conflicts_ = 0;
};

}  // namespace mtbert
