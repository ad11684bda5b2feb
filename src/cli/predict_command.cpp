// mtbert predict: one prediction of a trained run for text typed on the
// command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/torch.h>

#include "cli/commands.h"
#include "core/runtime.h"
#include "core/user_error.h"
#include "train/checkpoint.h"
#include "train/experiment.h"
#include "config/experiment_config.h"
#include "train/model_inputs.h"
#include "train/run_directory.h"

namespace mtbert::cli {

namespace {

struct PredictArgs {
  std::string run_dir;
  std::string task;
  std::vector<std::string> texts;
  std::string checkpoint = "best";
};

void run_predict(const PredictArgs& args) {
  RunDirectory run(args.run_dir);
  ExperimentConfig config = load_experiment(run.resolved_config());
  set_thread_count(0);
  Experiment experiment = reopen_experiment(config, run);
  TaskRuntime& task = experiment.task(args.task);
  const size_t wanted = task.spec.input == TaskInput::pair ? 2 : 1;
  if (args.texts.size() != wanted)
    throw UserError(fmt::format("task {} takes {} text(s) (--text ...), got {}", args.task, wanted, args.texts.size()));
  load_checkpoint_weights(run, args.checkpoint, experiment.model);

  TaskSplit split;
  split.task = task.name();
  Example example;
  example.text_a = args.texts[0];
  if (wanted == 2) example.text_b = args.texts[1];
  split.examples.push_back(example);
  const EncodedSplit encoded =
      encode_split(split, task.spec, *experiment.tokenizer, task.pair_encoding, task.config.max_length);
  TaskBatch batch = make_batch(encoded, {0});

  torch::NoGradGuard no_grad;
  experiment.model->eval();
  auto outputs = experiment.model(task.name(), model_inputs(batch, experiment.device));
  const double prediction = experiment.model->head(task.name())->predictions(outputs).item<double>();
  switch (task.spec.target) {
    case TaskTarget::classes: {
      auto probabilities = torch::softmax(outputs.to(torch::kCPU), -1)[0];
      fmt::print("{}\t(p = {:.3f})\n", static_cast<int64_t>(prediction),
                 probabilities[static_cast<int64_t>(prediction)].item<double>());
      break;
    }
    case TaskTarget::binary:
      fmt::print("{}\n", static_cast<int64_t>(prediction));
      break;
    case TaskTarget::regression:
      fmt::print("{:.3f}\n", prediction);
      break;
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand("predict", "Predict the label or score of text with a trained run");
  cmd->add_option("run", args->run_dir, "Run folder")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--task", args->task, "Task name, e.g. sst, para, sts")->required();
  cmd->add_option("--text", args->texts, "The text; twice for pair tasks (para, sts)")->required();
  cmd->add_option("--checkpoint", args->checkpoint, "best or last")->check(CLI::IsMember({"best", "last"}));
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace mtbert::cli
