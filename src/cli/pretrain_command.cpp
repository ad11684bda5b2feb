// mtbert pretrain: masked-language-model pretraining from YAML
// (experiments/pretrain/), or the resumption of an interrupted run.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/commands.h"
#include "cli/run_folders.h"
#include "config/pretrain_config.h"
#include "core/runtime.h"
#include "core/user_error.h"
#include "dist/launch_env.h"
#include "train/interrupt.h"
#include "train/pretrainer.h"
#include "train/run_lock.h"
#include "train/run_status.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct PretrainArgs {
  std::vector<std::string> positional;  // PRETRAIN.yaml and key=value overrides
  std::string out;
  std::vector<std::string> overlays;
  std::string resume;
  int threads = -1;
  bool no_progress = false;
  std::string command;
};

void run_pretraining(Pretraining& pretraining, const RunDirectory& run, bool resume, const PretrainArgs& args) {
  Pretrainer trainer(pretraining, run);
  if (resume) trainer.restore_last_checkpoint();
  install_stop_signal_handlers();
  TrainerHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.show_progress = !args.no_progress;
  if (!resume)
    run.write_summary({{"name", pretraining.config.name}, {"status", "running"}, {"command", args.command}});
  const TrainEnd end = trainer.train(hooks);
  const auto summary = trainer.finish(end, args.command);
  if (end == TrainEnd::interrupted) {
    set_exit_code(128 + stop_signal());
    return;
  }
  const auto& last = summary["last"];
  if (last.contains("dev"))
    fmt::print("held-out MLM: loss {:.4f}  accuracy {:.4f}  perplexity {:.2f}\n",
               last["dev"]["mlm"]["loss"].get<double>(), last["dev"]["mlm"]["accuracy"].get<double>(),
               last["dev"]["mlm"]["perplexity"].get<double>());
  fmt::print("model folder: {}\n", summary["model_folder"].get<std::string>());
}

void run_pretrain(const PretrainArgs& args) {
  // Ranks of a launcher would each pretrain the same run into one folder.
  if (const LaunchEnv env = launch_env(); env.distributed())
    throw UserError(fmt::format("mtbert pretrain trains as one process, but this is rank {} of {} ({}): start it "
                                "without a launcher",
                                env.rank, env.world_size, env.launcher));
  const ConfigArguments given = split_config_arguments(args.positional);
  if (!args.resume.empty()) {
    if (!given.path.empty() || !given.overrides.empty() || !args.overlays.empty())
      throw UserError("a resumed run keeps its config: give --resume RUN_DIR alone");
    if (run_is_done(resumable_run(args.resume).status)) {
      spdlog::info("{} is already finished", args.resume);
      return;
    }
    const RunLock lock(args.resume);
    const RunDirectory run(args.resume);
    Pretraining pretraining = reopen_pretraining(run);
    set_thread_count(args.threads >= 0 ? args.threads : static_cast<int>(pretraining.config.threads));
    run_pretraining(pretraining, run, /*resume=*/true, args);
    return;
  }
  if (given.path.empty()) throw UserError("pretrain needs PRETRAIN.yaml (or --resume RUN_DIR)");
  const PretrainConfig config = load_pretrain_config(
      given.path, given.overrides, std::vector<fs::path>(args.overlays.begin(), args.overlays.end()));
  const RunDirectory run(args.out.empty() ? fs::path(config.output_dir) : fs::path(args.out));
  in_fresh_run_folder(run, "pretrain", [&] {
    const int threads = set_thread_count(args.threads >= 0 ? args.threads : static_cast<int>(config.threads));
    spdlog::info("pretraining {} -> {} ({} threads)", config.name, run.root().string(), threads);
    Pretraining pretraining = start_pretraining(config, run);
    run_pretraining(pretraining, run, /*resume=*/false, args);
  });
}

}  // namespace

void add_pretrain_command(CLI::App& app) {
  auto args = std::make_shared<PretrainArgs>();
  auto* cmd = app.add_subcommand("pretrain", "Masked-language-model pretraining (YAML), or resume an interrupted run");
  cmd->add_option("config", args->positional, "PRETRAIN.yaml, then key.path=value overrides");
  cmd->add_option("--out", args->out, "Run folder (default: the config's output_dir, runs/<name>)");
  cmd->add_option("--overlay", args->overlays, "YAML file merged over the config; repeatable")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false);
  cmd->add_option("--resume", args->resume, "Continue the interrupted run in this folder")->check(CLI::ExistingDirectory);
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core; default: the config's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-progress", args->no_progress, "No progress bar (evaluations are still logged)");
  cmd->callback([args] {
    args->command = command_line();
    run_pretrain(*args);
  });
}

}  // namespace mtbert::cli
