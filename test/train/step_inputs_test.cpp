// A step's inputs land in buffers kept per input and shape: the same
// addresses every step of the same shapes (what a captured CUDA graph
// replays from), the new values in them, and distinct buffers for the
// inputs of one step even where their shapes agree.
#include "train/step_inputs.h"

#include <set>
#include <vector>

#include <torch/torch.h>

#include "support/test_support.h"

using mtbert::StepInputs;
using mtbert::TokenBatch;

namespace {

TokenBatch tokens(int64_t rows, int64_t length, int64_t first_id, bool with_types) {
  const auto ids = torch::arange(first_id, first_id + rows * length, torch::kLong).view({rows, length});
  return {ids, torch::ones_like(ids), with_types ? torch::zeros_like(ids) : torch::Tensor(), false};
}

}  // namespace

TEST_CASE("A step of the same shapes reads its inputs from the same buffers, holding the new values") {
  StepInputs inputs(torch::kCPU, /*keep_buffers=*/true);
  std::vector<const void*> first_step;
  for (int step = 0; step < 3; ++step) {
    const auto a = inputs.place(tokens(4, 7, 100 * step, true));
    const auto b = inputs.place(tokens(4, 7, 100 * step + 50, false));  // a second batch of the same shape
    const auto labels = inputs.place(torch::full({4}, step, torch::kLong));
    CHECK(torch::equal(a.input_ids, tokens(4, 7, 100 * step, true).input_ids));
    CHECK(torch::equal(b.input_ids, tokens(4, 7, 100 * step + 50, false).input_ids));
    CHECK(torch::equal(labels, torch::full({4}, step, torch::kLong)));
    CHECK_FALSE(a.padded);
    CHECK_FALSE(b.token_type_ids.defined());
    const std::vector<const void*> addresses{a.input_ids.data_ptr(), a.attention_mask.data_ptr(),
                                             a.token_type_ids.data_ptr(), b.input_ids.data_ptr(),
                                             b.attention_mask.data_ptr(), labels.data_ptr()};
    CHECK(std::set<const void*>(addresses.begin(), addresses.end()).size() == addresses.size());
    if (step == 0) first_step = addresses;
    else CHECK(addresses == first_step);
    inputs.end_step();
  }
  CHECK(inputs.buffers() == 6);

  // Another length is another buffer; the earlier ones are kept for their shape.
  const auto longer = inputs.place(tokens(4, 9, 0, true));
  CHECK(longer.input_ids.data_ptr() != first_step[0]);
  inputs.end_step();
  CHECK(inputs.place(tokens(4, 7, 0, true)).input_ids.data_ptr() == first_step[0]);
}

TEST_CASE("On a CPU without kept buffers, a step reads the batch's own tensors") {
  StepInputs inputs(torch::kCPU, /*keep_buffers=*/false);
  const auto batch = tokens(2, 5, 0, true);
  const auto placed = inputs.place(batch);
  CHECK(placed.input_ids.data_ptr() == batch.input_ids.data_ptr());
  CHECK(placed.token_type_ids.data_ptr() == batch.token_type_ids.data_ptr());
  CHECK(inputs.buffers() == 0);
}

TEST_CASE("On CUDA a step's host batches land in the kept device buffers", "[cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  StepInputs inputs(torch::Device(torch::kCUDA, 0), /*keep_buffers=*/false);
  const void* first = nullptr;
  for (int step = 0; step < 3; ++step) {
    const auto batch = tokens(4, 7, 100 * step, true);
    const auto placed = inputs.place(batch);
    CHECK(placed.input_ids.is_cuda());
    CHECK(torch::equal(placed.input_ids.cpu(), batch.input_ids));
    if (step == 0) first = placed.input_ids.data_ptr();
    else CHECK(placed.input_ids.data_ptr() == first);
    inputs.end_step();
  }
}
