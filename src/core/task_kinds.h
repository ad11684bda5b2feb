#pragma once
// The vocabulary that task data (data/), task heads (models/) and the
// experiment config (config/) share, so that each idea is one type everywhere.
namespace mtbert {

// What a task predicts.
enum class TaskTarget { classes, binary, regression };

// How a two-text example reaches the encoder.
enum class PairMode {
  none,     // a one-text task
  siamese,  // each text encoded alone: [CLS] a [SEP] and [CLS] b [SEP]
  cross,    // one joint input: [CLS] a [SEP] b [SEP] with token types 0 then 1
};

}  // namespace mtbert
