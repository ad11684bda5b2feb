#pragma once
// A task split tokenized once, up front: each example as the one or two
// sequences the model reads.
#include <cstdint>
#include <vector>

#include "core/task_kinds.h"
#include "data/task_data.h"
#include "text/sequence_encoder.h"
#include "text/tokenizer.h"

namespace mtbert {

struct EncodedExample {
  std::vector<Encoding> segments;  // 1 (single text, or cross pair) or 2 (siamese pair)
  double label = 0.0;
  int64_t length = 0;              // longest segment, for length bucketing
};

struct EncodedSplit {
  std::string task;
  bool labeled = false;
  std::vector<EncodedExample> examples;  // same order as TaskSplit::examples
  int64_t segments = 1;                  // per example
  int64_t pad_id = 0;
};

EncodedSplit encode_split(const TaskSplit& split, const TaskSpec& task, const Tokenizer& tokenizer,
                          PairMode pair_mode, int64_t max_length);

}  // namespace mtbert
