#pragma once
// Evaluation of every task on one split: predictions in the split's order,
// the task's metric and mean loss where the split is labeled, and the
// reports' overall score. No autograd, model in eval mode.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/experiment.h"

namespace mtbert {

class Communicator;
class EvalGraphs;

struct TaskEvaluation {
  std::string task;
  TaskMetric metric = TaskMetric::accuracy;
  bool labeled = false;
  double value = 0;  // the metric; meaningful only when labeled
  double loss = 0;   // mean loss per example; meaningful only when labeled
  int64_t examples = 0;
  std::vector<double> predictions;  // class index, 0/1 or score, in split order
};

struct Evaluation {
  Split split = Split::dev;
  std::vector<TaskEvaluation> tasks;
  bool has_overall = false;  // every evaluated task was labeled
  double overall = 0;
  double seconds = 0;
};

// Evaluates the tasks that have `split` loaded (see load_split). With `comm`
// (data-parallel ranks), each rank evaluates every world_size-th batch and the
// predictions and loss sums are summed over ranks: every rank ends with the
// whole evaluation, exactly as one process computes it. With `graphs`
// (make_eval_graphs: train.cuda_graphs on a GPU, one rank), each batch's
// forward is replayed from a CUDA graph; kept from one evaluation to the next.
Evaluation evaluate(Experiment& experiment, Split split, Communicator* comm = nullptr, EvalGraphs* graphs = nullptr);

// {"sst": {"metric": "accuracy", "value": ..., "loss": ...}, ...}
nlohmann::json evaluation_json(const Evaluation& evaluation);

// The CS224N leaderboard files of every evaluated task, into `dir`.
void write_predictions(const Experiment& experiment, const Evaluation& evaluation, const std::filesystem::path& dir);

// A plain-text table of the metrics, for the terminal.
std::string evaluation_table(const Evaluation& evaluation);

const char* metric_name(TaskMetric metric);

}  // namespace mtbert
