#include "data/encoded_split.h"

#include <algorithm>

namespace mtbert {

EncodedSplit encode_split(const TaskSplit& split, const TaskSpec& task, const Tokenizer& tokenizer,
                          PairMode pair_mode, int64_t max_length) {
  const bool siamese = task.input == TaskInput::pair && pair_mode == PairMode::siamese;
  EncodedSplit encoded;
  encoded.task = split.task;
  encoded.labeled = split.labeled;
  encoded.segments = siamese ? 2 : 1;
  encoded.pad_id = tokenizer.special_ids().pad;
  encoded.examples.reserve(split.examples.size());
  for (const Example& example : split.examples) {
    EncodedExample e;
    e.label = example.label;
    if (task.input == TaskInput::single) {
      e.segments.push_back(encode_single(tokenizer, example.text_a, max_length));
    } else if (siamese) {
      e.segments.push_back(encode_single(tokenizer, example.text_a, max_length));
      e.segments.push_back(encode_single(tokenizer, example.text_b, max_length));
    } else {
      e.segments.push_back(encode_pair(tokenizer, example.text_a, example.text_b, max_length));
    }
    for (const Encoding& segment : e.segments) {
      e.length = std::max(e.length, static_cast<int64_t>(segment.ids.size()));
    }
    encoded.examples.push_back(std::move(e));
  }
  return encoded;
}

}  // namespace mtbert
