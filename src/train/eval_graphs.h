#pragma once
// Evaluation's forwards captured in CUDA graphs and replayed
// (`train.cuda_graphs` on a GPU), as the training step's are
// (train/step_graphs.h): the evaluations between training steps meet the
// same tasks and lengths every time, and a replay dispatches one launch
// where an eager forward dispatches a few hundred operator calls, which set
// the pace of small batches on a GPU.
//
// A batch's segments are padded up to a multiple of
// train.cuda_graph_length_multiple and copied into buffers kept per input and
// shape (train/step_inputs.h); its forward runs under a key naming the task,
// the segments' shapes and whether a loss is computed. The forward's outputs
// (predictions and loss) made at the capture stay alive with the graph: each
// replay writes them again, and the caller gets copies of them.
//
// The bf16 weights are cast inside each replay (step_graphs.h): they change
// between evaluations without the host seeing it (a replayed optimizer
// step), so the caller keeps no WeightCastCache around run().
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "core/token_batch.h"
#include "data/batching.h"

namespace mtbert {

struct Experiment;
class StepGraphs;
class StepInputs;

class EvalGraphs {
 public:
  struct Outputs {
    torch::Tensor predictions;  // [B]
    torch::Tensor loss;         // the batch's mean loss; undefined without labels
  };
  // A task's forward on its batch's segments and labels (undefined when the
  // batch has none), on the device, as the evaluator runs it.
  using Forward = std::function<Outputs(const std::vector<TokenBatch>& segments, const torch::Tensor& labels)>;

  EvalGraphs(torch::Device device, int64_t length_multiple, int64_t positions);
  ~EvalGraphs();

  // `forward` of `task` on `batch` (its labels when `labeled`) as above.
  Outputs run(const std::string& task, const TaskBatch& batch, bool labeled, const Forward& forward);

  // The graphs captured so far (tests, the log).
  size_t graphs() const;

 private:
  int64_t multiple_, positions_;
  std::unique_ptr<StepGraphs> graphs_;
  std::unique_ptr<StepInputs> inputs_;
  std::map<std::string, Outputs> captured_outputs_;
};

// The evaluation graphs of `experiment`: with train.cuda_graphs on a CUDA
// device, else none (evaluation runs eagerly).
std::unique_ptr<EvalGraphs> make_eval_graphs(const Experiment& experiment);

}  // namespace mtbert
