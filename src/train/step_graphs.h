#pragma once
// A training step's device work captured in CUDA graphs and replayed
// (`train.cuda_graphs`): on a GPU the host's dispatch of a few thousand
// operator calls per step sets the pace (the H200's bert-base step left the
// GPU idle over half the time); a replay is one launch. Evaluation's
// forwards run the same way (train/eval_graphs.h).
//
// The step hands over its work in pieces, each under a key that names
// everything the work's kernels depend on besides the values in their
// tensors (TrainStep: its passes' tasks, shapes and loss weights; the update:
// which parameters have gradients). A key's first runs are eager (warm-up:
// cuBLAS workspaces, autograd's buffers, the optimizer's state, the
// gradients themselves are made there, outside any graph); the next one is
// captured and replayed at once (a capture runs nothing), and every later one
// is a replay. All of it runs on one side stream (a capture cannot run on the
// default stream), ordered after what the caller's stream queued before (the
// inputs' copies) and before what it queues after. The graphs share one
// private memory pool: they run one at a time, in the order the step asks.
//
// What the work may do is what a graph can replay: kernels on tensors whose
// addresses stay the same from one run of the key to the next (parameters,
// their kept gradients, the optimizer's state, the step's kept input
// buffers, tensors made inside the work). It must not read the device on the
// host (a capture fails) and must not count on host code inside it running
// again: a replay runs none. Dropout takes new masks at every replay
// (LibTorch's CUDA generator advances its offset per replay). Each run of
// the work casts the bf16 weights itself (a WeightCastCache of its own; none
// may live around run()): a cast kept from outside would be read where it
// was at the capture, stale once a replayed update moved the weights, or
// freed.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <c10/core/Device.h>

namespace mtbert {

struct TokenBatch;

class StepGraphs {
 public:
  enum class Run { eager, captured, replayed };

  virtual ~StepGraphs() = default;

  // Runs `work` under `key` as above; says how it ran (captured: captured and
  // replayed once).
  virtual Run run(const std::string& key, const std::function<void()>& work) = 0;

  // The graphs captured so far (tests, the log).
  virtual size_t graphs() const = 0;
};

// What a graph's kernels depend on in a batch of tokens besides its values:
// "32x64 padded", with " no-types" when it has no token types.
std::string graph_shape_key(const TokenBatch& tokens);

// How many times a key runs eagerly before it is captured.
constexpr int kStepGraphWarmups = 2;

// Graphs on `device`, a CUDA device of a CUDA build; `what` names their work
// in a failed capture's message ("the training step's work").
std::unique_ptr<StepGraphs> make_step_graphs(c10::Device device, std::string what);

}  // namespace mtbert
