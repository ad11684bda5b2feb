#include "train/eval_graphs.h"

#include <fmt/format.h>

#include "data/join_batches.h"
#include "train/experiment.h"
#include "train/step_graphs.h"
#include "train/step_inputs.h"

namespace mtbert {

EvalGraphs::EvalGraphs(torch::Device device, int64_t length_multiple, int64_t positions)
    : multiple_(length_multiple),
      positions_(positions),
      graphs_(make_step_graphs(device, "an evaluation forward")),
      inputs_(std::make_unique<StepInputs>(device, /*keep_buffers=*/true)) {}

EvalGraphs::~EvalGraphs() = default;

size_t EvalGraphs::graphs() const { return graphs_->graphs(); }

EvalGraphs::Outputs EvalGraphs::run(const std::string& task, const TaskBatch& batch, bool labeled,
                                    const Forward& forward) {
  // Every batch's inputs are numbered from 0: a key's inputs land in the
  // buffers its capture read (the caller's stream copies them after the
  // previous replay: step_graphs.h).
  inputs_->end_step();
  std::vector<TokenBatch> segments;
  std::vector<std::string> shapes;
  for (const auto& segment : batch.segments) {
    segments.push_back(inputs_->place(pad_to_multiple(segment, multiple_, positions_, batch.pad_id)));
    shapes.push_back(graph_shape_key(segments.back()));
  }
  const torch::Tensor labels = labeled ? inputs_->place(batch.labels) : torch::Tensor();
  const std::string key = fmt::format("{} {}{}", task, fmt::join(shapes, ", "), labeled ? " with loss" : "");
  Outputs outputs;
  const auto how = graphs_->run(key, [&] { outputs = forward(segments, labels); });
  if (how == StepGraphs::Run::eager) return outputs;
  // A replay runs no host code: its outputs are where the capture's were,
  // in the pool the graphs share, where another key's replay may write next.
  // Copied out (on the caller's stream, after the replay), they stay the
  // caller's for as long as it holds them.
  if (how == StepGraphs::Run::captured) captured_outputs_[key] = outputs;
  const Outputs& kept = captured_outputs_.at(key);
  return {kept.predictions.clone(), kept.loss.defined() ? kept.loss.clone() : kept.loss};
}

std::unique_ptr<EvalGraphs> make_eval_graphs(const Experiment& experiment) {
  const TrainSection& train = experiment.config.train;
  if (!train.cuda_graphs || !experiment.device.is_cuda()) return nullptr;
  return std::make_unique<EvalGraphs>(experiment.device, train.cuda_graph_length_multiple,
                                      experiment.model_config.max_position_embeddings);
}

}  // namespace mtbert
