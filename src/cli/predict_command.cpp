// mtbert predict: one prediction of a trained run for text typed on the
// command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <torch/torch.h>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "data/batching.h"
#include "train/experiment.h"

namespace mtbert::cli {

namespace {

struct PredictArgs {
  std::string run_dir;
  std::string task;
  std::vector<std::string> texts;
  std::string checkpoint = "best";
};

void run_predict(const PredictArgs& args) {
  set_thread_count(0);
  Experiment experiment = open_run(args.run_dir, args.checkpoint).experiment;
  TaskRuntime& task = experiment.task(args.task);
  const size_t wanted = task.spec.input == TaskInput::pair ? 2 : 1;
  if (args.texts.size() != wanted)
    throw UserError(fmt::format("task {} takes {} text(s) (--text ...), got {}", args.task, wanted, args.texts.size()));

  TaskSplit split;
  split.task = task.name();
  Example example;
  example.text_a = args.texts[0];
  if (wanted == 2) example.text_b = args.texts[1];
  split.examples.push_back(example);
  const EncodedSplit encoded =
      encode_split(split, task.spec, *experiment.tokenizer, task.head.pair_mode, task.config.max_length);
  TaskBatch batch = make_batch(encoded, {0});

  c10::InferenceMode inference;  // no autograd records, no version counters
  experiment.model->eval();
  auto outputs = experiment.model(task.name(), batch.segments_on(experiment.device));
  const double prediction = experiment.model->head(task.name())->predictions(outputs).item<double>();
  // "3\tpositive": the index as the data files write it, then its meaning.
  const auto label = [&](int64_t index) {
    const auto& names = task.spec.label_names;
    return index >= 0 && index < static_cast<int64_t>(names.size()) ? fmt::format("{}\t{}", index, names[index])
                                                                    : std::to_string(index);
  };
  switch (task.spec.target) {
    case TaskTarget::classes: {
      auto probabilities = torch::softmax(outputs.to(torch::kCPU), -1)[0];
      const auto index = static_cast<int64_t>(prediction);
      fmt::print("{}\t(p = {:.3f})\n", label(index), probabilities[index].item<double>());
      break;
    }
    case TaskTarget::binary: {
      const double p = experiment.model->head(task.name())->probability(outputs.to(torch::kCPU))[0].item<double>();
      fmt::print("{}\t(p({} = 1) = {:.3f})\n", label(static_cast<int64_t>(prediction)), task.spec.label_column, p);
      break;
    }
    case TaskTarget::regression:
      fmt::print("{:.3f}\n", prediction);
      break;
  }
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand("predict", "Predict the label or score of text with a trained run");
  cmd->add_option("run", args->run_dir, "Run folder")->required()->check(existing_folder());
  cmd->add_option("--task", args->task, "Task name, e.g. sst, para, sts")->required();
  cmd->add_option("--text", args->texts, "The text; twice for pair tasks (para, sts)")->required()->check(utf8_text());
  cmd->add_option("--checkpoint", args->checkpoint, "best or last")->check(CLI::IsMember({"best", "last"}));
  cmd->callback([args] { run_predict(*args); });
}

}  // namespace mtbert::cli
