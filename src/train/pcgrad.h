#pragma once
// PCGrad (Yu et al. 2020, "Gradient Surgery for Multi-Task Learning") on the
// shared parameters: for each task i, in a random order over the other tasks
// j, when g_i . g_j < 0 subtract the projection of g_i on g_j, always
// projecting against the ORIGINAL task gradients g_j; the update is the sum (or
// mean) of the projected gradients. Task-specific parameters keep their own
// gradients untouched.
//
// Memory: one flat gradient per task, nothing more.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <torch/types.h>

namespace mtbert {

enum class PcgradReduction { sum, mean };

// The surgery itself, on flat task gradients [T][P]. `rng` chooses the order
// of the other tasks for each task.
torch::Tensor pcgrad_combine(const std::vector<torch::Tensor>& task_grads, PcgradReduction reduction,
                             std::mt19937_64& rng);

// Collects task gradients of the shared parameters after each task's
// backward(), then writes the combined gradient back into their .grad.
class PcgradAccumulator {
 public:
  explicit PcgradAccumulator(std::vector<torch::Tensor> shared_parameters);

  // Call right after task t's backward(): flattens the shared parameters'
  // gradients into a new task gradient and zeroes them for the next task.
  void capture_task_gradient();

  // Combines the captured gradients into the shared parameters' .grad and
  // clears the captures.
  void apply(PcgradReduction reduction, std::mt19937_64& rng);

  // How many conflicting pairs (g_i . g_j < 0) the last apply() saw: logged.
  int64_t last_conflicts() const { return last_conflicts_; }

 private:
  std::vector<torch::Tensor> shared_;
  std::vector<torch::Tensor> task_grads_;
  int64_t last_conflicts_ = 0;
};

}  // namespace mtbert
