#include "report/dev_outcomes.h"

#include <fmt/format.h>

#include "config/experiment_config.h"
#include "core/user_error.h"
#include "data/prediction_file.h"
#include "data/task_data.h"
#include "train/experiment.h"
#include "train/run_directory.h"

namespace mtbert {

std::map<std::string, RunDevOutcome> read_dev_outcomes(const std::filesystem::path& run_folder) {
  const ExperimentConfig config = load_experiment(RunDirectory(run_folder).resolved_config());
  std::map<std::string, RunDevOutcome> outcomes;
  for (const TaskConfig& task : config.tasks) {
    if (task.dev.empty()) continue;
    const TaskSpec& spec = builtin_task(task.type.empty() ? task.name : task.type);
    const TaskSplit dev = read_task_split(spec, task.dev, split_read_options(config, task, Split::dev));
    const auto path = run_folder / "predictions" / prediction_file_name(task.name, "dev");
    const PredictionFile predictions = read_prediction_file(path);
    if (predictions.ids.size() != dev.examples.size())
      throw UserError(fmt::format("{}: {} predictions for the {} examples of {}", path.string(),
                                  predictions.ids.size(), dev.examples.size(), task.dev));
    RunDevOutcome out;
    out.metric = spec.metric;
    for (size_t i = 0; i < dev.examples.size(); ++i) {
      const Example& example = dev.examples[i];
      if (predictions.ids[i] != example.id)
        throw UserError(fmt::format("{}:{}: id {} where {} (line {}) has {}: the predictions are not of this dev file",
                                    path.string(), i + 2, predictions.ids[i], task.dev, example.line, example.id));
      out.ids.push_back(example.id);
      out.gold.push_back(example.label);
      out.predicted.push_back(predictions.predictions[i]);
    }
    outcomes[task.name] = std::move(out);
  }
  return outcomes;
}

}  // namespace mtbert
