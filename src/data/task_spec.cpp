#include "data/task_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/internal_error.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

// The CS224N minBERT default project's tasks, with the column names of its
// data files and the headers its starter code writes into prediction files
// ("Similiarity" is the starter code's spelling, which the leaderboard expects).
std::vector<TaskSpec> make_builtin_tasks() {
  TaskSpec sst;
  sst.name = "sst";
  sst.input = TaskInput::single;
  sst.target = TaskTarget::classes;
  sst.metric = TaskMetric::accuracy;
  sst.num_classes = 5;
  sst.label_min = 0;
  sst.label_max = 4;
  sst.text_columns = {"sentence"};
  sst.label_column = "sentiment";
  sst.label_names = {"very negative", "negative", "neutral", "positive", "very positive"};
  sst.prediction_column = "Predicted_Sentiment";
  sst.prediction_format = PredictionFormat::integer;

  TaskSpec para;
  para.name = "para";
  para.input = TaskInput::pair;
  para.target = TaskTarget::binary;
  para.metric = TaskMetric::accuracy;
  para.num_classes = 2;
  para.label_min = 0;
  para.label_max = 1;
  para.text_columns = {"sentence1", "sentence2"};
  para.label_column = "is_duplicate";
  para.label_names = {"not duplicate", "duplicate"};
  para.prediction_column = "Predicted_Is_Paraphrase";
  para.prediction_format = PredictionFormat::float32;

  TaskSpec sts;
  sts.name = "sts";
  sts.input = TaskInput::pair;
  sts.target = TaskTarget::regression;
  sts.metric = TaskMetric::pearson;
  sts.num_classes = 0;
  sts.label_min = 0;
  sts.label_max = 5;
  sts.text_columns = {"sentence1", "sentence2"};
  sts.label_column = "similarity";
  sts.prediction_column = "Predicted_Similiarity";
  sts.prediction_format = PredictionFormat::float32;

  TaskSpec cfimdb;
  cfimdb.name = "cfimdb";
  cfimdb.input = TaskInput::single;
  cfimdb.target = TaskTarget::binary;
  cfimdb.metric = TaskMetric::accuracy;
  cfimdb.num_classes = 2;
  cfimdb.label_min = 0;
  cfimdb.label_max = 1;
  cfimdb.text_columns = {"sentence"};
  cfimdb.label_column = "sentiment";
  cfimdb.label_names = {"negative", "positive"};
  cfimdb.prediction_column = "Predicted_Sentiment";
  cfimdb.prediction_format = PredictionFormat::integer;

  return {sst, para, sts, cfimdb};
}

const std::vector<TaskSpec>& builtin_tasks() {
  static const std::vector<TaskSpec> tasks = make_builtin_tasks();
  return tasks;
}

}  // namespace

const TaskSpec& builtin_task(std::string_view name) {
  for (const TaskSpec& task : builtin_tasks()) {
    if (task.name == name) return task;
  }
  throw UserError(fmt::format("unknown task '{}': the built-in tasks are {}", name,
                              fmt::join(builtin_task_names(), ", ")));
}

std::vector<std::string> builtin_task_names() {
  std::vector<std::string> names;
  for (const TaskSpec& task : builtin_tasks()) names.push_back(task.name);
  return names;
}

double normalized_metric(TaskMetric metric, double value) {
  switch (metric) {
    case TaskMetric::accuracy:
      return value;
    case TaskMetric::pearson:
      return (value + 1.0) / 2.0;
  }
  throw InternalError("normalized_metric: unknown metric");
}

double overall_score(const std::vector<std::pair<TaskMetric, double>>& metrics) {
  if (metrics.empty()) return 0.0;
  double sum = 0.0;
  for (const auto& [metric, value] : metrics) sum += normalized_metric(metric, value);
  return sum / static_cast<double>(metrics.size());
}

}  // namespace mtbert
