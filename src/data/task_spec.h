#pragma once
// What defines a task: its inputs (one text or two), its target (classes,
// binary, a real-valued score), its metric, where its columns are in the CS224N
// data files, and the leaderboard column its predictions go under.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/task_kinds.h"

namespace mtbert {

enum class TaskInput { single, pair };
enum class TaskMetric { accuracy, pearson };
// How a prediction is spelled in the leaderboard files, as the CS224N starter
// code prints it: SST/CFIMDB an argmax (numpy int64: "3"), Quora a rounded
// sigmoid and STS a score (numpy float32: "1.0", "3.4567854").
enum class PredictionFormat { integer, float32 };

struct TaskSpec {
  std::string name;  // "sst", "para", "sts", "cfimdb"
  TaskInput input = TaskInput::single;
  TaskTarget target = TaskTarget::classes;
  TaskMetric metric = TaskMetric::accuracy;
  int64_t num_classes = 0;   // classes: 5 for SST; binary: 2; regression: 0
  double label_min = 0.0;    // valid label range, inclusive (regression: 0..5)
  double label_max = 0.0;
  std::vector<std::string> text_columns;  // {"sentence"} or {"sentence1", "sentence2"}
  std::string label_column;               // "sentiment", "is_duplicate", "similarity"
  // What each label means, by index (classes and binary targets): what
  // predict prints beside a predicted index.
  std::vector<std::string> label_names;
  std::string prediction_column;          // leaderboard header, e.g. "Predicted_Sentiment"
  PredictionFormat prediction_format = PredictionFormat::integer;
};

// The four built-in tasks. UserError listing the known names otherwise.
const TaskSpec& builtin_task(std::string_view name);
std::vector<std::string> builtin_task_names();

// A metric mapped onto [0, 1] so that tasks can be averaged: accuracy as is,
// Pearson r as (r + 1) / 2.
double normalized_metric(TaskMetric metric, double value);

// The reports' overall score: the mean of normalized metrics, i.e. for the
// three tasks (SST acc + Para acc + (STS r + 1) / 2) / 3.
double overall_score(const std::vector<std::pair<TaskMetric, double>>& metrics);

}  // namespace mtbert
