#pragma once
// What a task's head is: its target, how pairs reach it, how the sentence
// vector is pooled and combined. Plain data (no LibTorch), shared by the model
// (task_head.h) and the experiment config that chooses it.
#include <cstdint>
#include <string>

#include "core/task_kinds.h"

namespace mtbert {

enum class Pooling { cls, mean, pooler };
enum class PairCombine { concat, cosine };

struct HeadSpec {
  std::string task;
  TaskTarget target = TaskTarget::classes;
  int64_t num_classes = 0;  // classes only
  PairMode pair_mode = PairMode::none;
  PairCombine combine = PairCombine::concat;  // siamese only
  Pooling pooling = Pooling::cls;
  double dropout = 0.1;
  double regression_max = 5.0;  // cosine regression maps onto [0, regression_max]
};

// Throws UserError, naming the task's config key (tasks.<task>.<key>), for a head no
// model can be built with: a task name that cannot be a module name, fewer
// than 2 classes, cosine combination outside siamese pairs or for classes, a
// dropout outside [0, 1), and "pooler" pooling on an encoder without a pooler.
void validate_head_spec(const HeadSpec& spec, bool encoder_has_pooler);

// How many encoder inputs one example of the head has: 2 for siamese pairs
// (each text encoded on its own), 1 otherwise.
inline int64_t segments_per_example(const HeadSpec& spec) { return spec.pair_mode == PairMode::siamese ? 2 : 1; }

}  // namespace mtbert
