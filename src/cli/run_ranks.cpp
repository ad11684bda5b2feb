#include "cli/run_ranks.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/run_folders.h"
#include "core/json_file.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/local_launcher.h"
#include "train/experiment.h"
#include "train/run_status.h"
#include "train/train_progress.h"

namespace mtbert::cli {

namespace fs = std::filesystem;

void check_resume(const RunArgs& args, const std::function<std::string(const fs::path&)>& canonical) {
  const RunDirectory run(args.resume);
  check_resume_config(run, args.force, canonical);
  if (args.nproc > 0) {
    const fs::path state = run.checkpoint_to_read("last") / "state.json";
    const int64_t ranks = train_progress_from_json(read_json_file(state), state.string()).world_size;
    if (ranks != args.nproc)
      throw UserError(fmt::format("{} was trained with {} rank(s): resume it with --nproc {} (each batch was planned "
                                  "for them)",
                                  args.resume, ranks, ranks));
  }
}

int rank_thread_count(const RunArgs& args, int64_t config_threads, const LaunchEnv& env) {
  if (args.threads >= 0) return set_thread_count(args.threads);
  if (config_threads == 0 && env.distributed()) return set_thread_count(default_rank_threads(env));
  return set_thread_count(config_threads);
}

CommunicatorOptions communicator_options(const DistributedSection& distributed, DeviceChoice device) {
  CommunicatorOptions options;
  options.nccl = distributed.backend == DistributedBackend::nccl ||
                 (distributed.backend == DistributedBackend::automatic && resolve_device(device).is_cuda());
  options.timeout = std::chrono::seconds(distributed.timeout_seconds);
  return options;
}

void launch_local_ranks(const std::string& subcommand, const RunArgs& args, int64_t timeout_seconds) {
  std::vector<std::string> child{subcommand};
  if (!args.resume.empty()) {
    child.insert(child.end(), {"--resume", args.resume});
  } else {
    child.insert(child.end(), args.positional.begin(), args.positional.end());
    if (!args.out.empty()) child.insert(child.end(), {"--out", args.out});
    for (const auto& overlay : args.overlays) child.insert(child.end(), {"--overlay", overlay});
  }
  if (args.threads >= 0) child.insert(child.end(), {"--threads", std::to_string(args.threads)});
  if (args.force) child.push_back("--force");
  if (args.no_progress) child.push_back("--no-progress");
  spdlog::info("launching {} local ranks", args.nproc);
  const LocalLaunchResult result = run_local_ranks(fs::read_symlink("/proc/self/exe"), child, args.nproc,
                                                   std::chrono::seconds(timeout_seconds));
  if (result.told) throw UserError(result.rank_error);  // the rank's own line
  if (!result.failure.empty()) {
    const std::string what =
        result.rank_error.empty() ? result.failure : fmt::format("{}: {}", result.failure, result.rank_error);
    throw DistributedError(fmt::format("{} (each rank's output: {})", what, result.logs.string()));
  }
  set_exit_code(result.exit_code);
}

}  // namespace mtbert::cli
