#include "train/evaluator.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "data/batching.h"
#include "data/metrics.h"
#include "data/prediction_file.h"
#include "dist/communicator.h"
#include "train/eval_graphs.h"

namespace mtbert {

const char* metric_name(TaskMetric metric) { return metric == TaskMetric::accuracy ? "accuracy" : "pearson"; }

namespace {

TaskEvaluation evaluate_task(Experiment& e, TaskRuntime& task, Split split, Communicator* comm, EvalGraphs* graphs) {
  const EncodedSplit& data = task.encoded.at(split);
  BatchingOptions options;
  options.batch_size = e.config.train.eval_batch_size;
  options.shuffle = false;  // sorted by length: least padding

  TaskEvaluation result;
  result.task = task.name();
  result.metric = task.spec.metric;
  result.labeled = data.labeled;
  result.examples = static_cast<int64_t>(data.examples.size());
  result.predictions.assign(data.examples.size(), 0.0);

  TaskHead head = e.model->head(task.name());
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(e.device));
  const auto plan = plan_batches(data, options, 0);
  const auto forward = [&](const std::vector<TokenBatch>& segments, const torch::Tensor& labels) {
    torch::Tensor outputs;
    {
      const AutocastScope autocast(e.device, e.config.precision == Precision::bf16);
      outputs = e.model(task.name(), segments);
    }
    return EvalGraphs::Outputs{head->predictions(outputs), labels.defined() ? head->loss(outputs, labels)
                                                                            : torch::Tensor()};
  };
  // Eager, bf16: each weight cast once for all the batches. A graph's forward
  // casts them itself (step_graphs.h).
  std::optional<WeightCastCache> weight_casts;
  if (!graphs) weight_casts.emplace();
  const size_t ranks = comm ? static_cast<size_t>(comm->world_size()) : 1;
  const size_t rank = comm ? static_cast<size_t>(comm->rank()) : 0;
  for (size_t b = rank; b < plan.size(); b += ranks) {
    const auto& indices = plan[b];
    TaskBatch batch = make_batch(data, indices);
    const auto outputs = graphs ? graphs->run(task.name(), batch, data.labeled, forward)
                                : forward(batch.segments_on(e.device),
                                          data.labeled ? batch.labels.to(e.device) : torch::Tensor());
    auto predicted = outputs.predictions.to(torch::kCPU, torch::kDouble);
    auto values = predicted.accessor<double, 1>();
    for (int64_t i = 0; i < batch.size(); ++i) result.predictions[batch.indices[i]] = values[i];
    if (data.labeled) loss_sum += outputs.loss.to(torch::kDouble) * batch.size();
  }
  if (comm) {
    // Each prediction was made by one rank, the others left a zero there.
    auto predictions = torch::tensor(result.predictions, torch::kDouble).to(comm->device());
    auto sums = torch::cat({predictions, loss_sum.reshape({1}).to(comm->device())});
    comm->all_reduce_sum(sums);
    sums = sums.cpu();
    std::copy(sums.data_ptr<double>(), sums.data_ptr<double>() + result.predictions.size(), result.predictions.begin());
    loss_sum = sums[static_cast<int64_t>(result.predictions.size())];
  }
  if (!data.labeled) return result;

  result.loss = result.examples > 0 ? loss_sum.item<double>() / static_cast<double>(result.examples) : 0.0;
  if (task.spec.metric == TaskMetric::accuracy) {
    std::vector<int64_t> predicted, gold;
    for (size_t i = 0; i < data.examples.size(); ++i) {
      predicted.push_back(static_cast<int64_t>(result.predictions[i]));
      gold.push_back(static_cast<int64_t>(data.examples[i].label));
    }
    result.value = accuracy(predicted, gold);
  } else {
    std::vector<double> gold;
    for (const auto& ex : data.examples) gold.push_back(ex.label);
    result.value = pearson(result.predictions, gold);
  }
  return result;
}

}  // namespace

Evaluation evaluate(Experiment& e, Split split, Communicator* comm, EvalGraphs* graphs) {
  const auto start = std::chrono::steady_clock::now();
  // Inference mode, not just no-grad: tensors made here carry no version
  // counters or view records (nothing in the model caches them for training).
  c10::InferenceMode inference;
  const bool was_training = e.model->is_training();
  e.model->eval();
  Evaluation result;
  result.split = split;
  std::vector<std::pair<TaskMetric, double>> metrics;
  result.has_overall = true;
  for (auto& task : e.tasks) {
    if (!task.has(split)) continue;
    result.tasks.push_back(evaluate_task(e, task, split, comm, graphs));
    const auto& t = result.tasks.back();
    if (t.labeled) metrics.emplace_back(t.metric, t.value);
    else result.has_overall = false;
  }
  result.has_overall = result.has_overall && !metrics.empty();
  if (result.has_overall) result.overall = overall_score(metrics);
  e.model->train(was_training);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

nlohmann::json evaluation_json(const Evaluation& evaluation) {
  nlohmann::json tasks = nlohmann::json::object();
  for (const auto& t : evaluation.tasks) {
    if (!t.labeled) continue;
    tasks[t.task] = {{"metric", metric_name(t.metric)}, {"value", t.value}, {"loss", t.loss}, {"examples", t.examples}};
  }
  return tasks;
}

void write_predictions(const Experiment& e, const Evaluation& evaluation, const std::filesystem::path& dir) {
  for (const auto& t : evaluation.tasks) {
    const TaskRuntime& task = e.task(t.task);
    const TaskSplit& rows = task.rows.at(evaluation.split);
    std::vector<std::string> ids;
    for (const auto& ex : rows.examples) ids.push_back(ex.id);
    write_prediction_file(dir / prediction_file_name(t.task, split_name(evaluation.split)), task.spec, ids,
                          t.predictions);
  }
}

std::string evaluation_table(const Evaluation& evaluation) {
  std::string out = fmt::format("{:<10} {:<9} {:>8} {:>8} {:>8}\n", "task", "metric", "value", "loss", "examples");
  for (const auto& t : evaluation.tasks) {
    if (t.labeled)
      out += fmt::format("{:<10} {:<9} {:>8.4f} {:>8.4f} {:>8}\n", t.task, metric_name(t.metric), t.value, t.loss,
                         t.examples);
    else
      out += fmt::format("{:<10} {:<9} {:>8} {:>8} {:>8}\n", t.task, "-", "(no labels)", "", t.examples);
  }
  if (evaluation.has_overall) out += fmt::format("{:<10} {:<9} {:>8.4f}\n", "overall", "", evaluation.overall);
  return out;
}

}  // namespace mtbert
