#include "cli/run_ranks.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "core/thread_count.h"
#include "dist/local_launcher.h"
#include "train/experiment.h"

namespace mtbert::cli {

namespace fs = std::filesystem;

int rank_thread_count(const RunArgs& args, int64_t config_threads, const LaunchEnv& env) {
  if (args.threads >= 0) return set_thread_count(args.threads);
  if (config_threads == 0 && env.distributed()) return set_thread_count(default_rank_threads(env));
  return set_thread_count(static_cast<int>(config_threads));
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
  if (args.no_progress) child.push_back("--no-progress");
  spdlog::info("launching {} local ranks", args.nproc);
  const LocalLaunchResult result = run_local_ranks(fs::read_symlink("/proc/self/exe"), child, args.nproc,
                                                   std::chrono::seconds(timeout_seconds));
  if (!result.failure.empty()) throw DistributedError(result.failure);
  set_exit_code(result.exit_code);
}

}  // namespace mtbert::cli
