#pragma once
// The batches of several tasks as one encoder input: every segment of every
// batch padded to the longest and stacked by rows, so that a multi-task
// training step runs one encoder pass where it would run one per task (one
// autograd graph, GEMMs over all the step's rows, a third of the operator
// calls for three tasks).
#include <string>
#include <vector>

#include "core/token_batch.h"

namespace mtbert {

// The rows of one task's batch in a JoinedBatch: segment s (0 or 1; siamese
// pairs have two) holds rows [first_row + s * rows, first_row + (s + 1) * rows).
// A part's segments are contiguous, and the parts follow each other in order
// and cover every row, so a per-part result concatenated over the parts is a
// result over all rows.
struct JoinedPart {
  std::string task;
  int64_t first_row = 0;
  int64_t rows = 0;  // the batch's examples
  int64_t segments = 1;

  int64_t segment_row(int64_t segment) const { return first_row + segment * rows; }
  int64_t all_rows() const { return segments * rows; }
};

struct JoinedBatch {
  TokenBatch tokens;  // [sum of all_rows(), N]; padding as the batches' own (mask 0)
  std::vector<JoinedPart> parts;
};

}  // namespace mtbert
