#pragma once
// What a task's head is: its target, how pairs reach it, how the sentence
// vector is pooled and combined. Plain data (no LibTorch), shared by the model
// (task_head.h) and the experiment config that chooses it.
#include <cstdint>
#include <string>

#include "core/task_kinds.h"

namespace mtbert {

enum class Pooling { cls, mean, pooler };
// Siamese pairs with sentence vectors u, v: [u, v, |u - v|, u * v] (concat,
// the pair features of InferSent's NLI classifier, Conneau et al. 2017), [u, v] (uv),
// or their cosine (cosine).
enum class PairCombine { concat, uv, cosine };
// How a cosine head reads cos(u, v), for regression onto [0, max] / for a
// binary probability:
//   scaled:  max * cos            / clamp(cos, 0, 1)
//   relu:    max * ReLU(cos)      / ReLU(cos)   (= clamp(cos, 0, 1))
//   shifted: max * (cos + 1) / 2  / (cos + 1) / 2
// The reports use 5 cos (final report) and 5 ReLU(cos) (DeBERTa report) with
// MSE against the 0-5 labels; shifted maps label 0 onto opposite vectors.
enum class CosineMap { scaled, relu, shifted };

struct HeadSpec {
  std::string task;
  TaskTarget target = TaskTarget::classes;
  int64_t num_classes = 0;  // classes only
  PairMode pair_mode = PairMode::none;
  PairCombine combine = PairCombine::concat;  // siamese only
  CosineMap cosine_map = CosineMap::scaled;   // cosine only
  // Siamese only: a linear layer (hidden -> hidden), the same for both
  // sentences, applied to each sentence vector before they are combined.
  bool sentence_projection = false;
  Pooling pooling = Pooling::cls;
  double dropout = 0.1;
  double regression_max = 5.0;  // cosine regression maps onto [0, regression_max]
};

// Throws UserError, naming the task's config key (tasks.<task>.<key>), for a head no
// model can be built with: a task name that cannot be a module name, fewer
// than 2 classes, cosine combination outside siamese pairs or for classes, a
// sentence projection outside siamese pairs, a dropout outside [0, 1), and
// "pooler" pooling on an encoder without a pooler.
void validate_head_spec(const HeadSpec& spec, bool encoder_has_pooler);

// How many encoder inputs one example of the head has: 2 for siamese pairs
// (each text encoded on its own), 1 otherwise.
inline int64_t segments_per_example(const HeadSpec& spec) { return spec.pair_mode == PairMode::siamese ? 2 : 1; }

}  // namespace mtbert
