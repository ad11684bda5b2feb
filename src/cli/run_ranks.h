#pragma once
// What the commands that train a run (train, pretrain) share to run it as
// one process or as data-parallel ranks: their arguments, each rank's thread
// count and communicator settings, and --nproc's local ranks.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/experiment_config.h"
#include "dist/communicator.h"
#include "dist/launch_env.h"

namespace mtbert::cli {

struct RunArgs {
  std::vector<std::string> positional;  // CONFIG.yaml and key=value overrides
  std::string out;
  std::vector<std::string> overlays;
  std::string resume;
  int threads = -1;  // -1: the config's
  int nproc = 0;     // > 0: launch this many local ranks
  bool force = false;  // --resume even though the run's config changed since its checkpoint
  bool no_progress = false;
  std::string command;
};

// What `--resume` checks in each process, once the run's state is read
// (resumable_run or lock_to_resume, once per process) and it is not
// finished: its config is the one of its last checkpoint (or --force, see
// check_resume_config), and --nproc gives it the ranks it was trained with.
// `canonical` gives a resolved config file in canonical form.
void check_resume(const RunArgs& args, const std::function<std::string(const std::filesystem::path&)>& canonical);

// Sets and returns the intra-op threads: --threads, else the config's; a rank
// of a launcher with the config's 0 (one per core) gets its share of the
// cores instead.
int rank_thread_count(const RunArgs& args, int64_t config_threads, const LaunchEnv& env);

// The config's `distributed:` section for the device the run trains on.
CommunicatorOptions communicator_options(const DistributedSection& distributed, DeviceChoice device);

// --nproc N: the ranks as child processes, each `mtbert <subcommand>` with
// the run's arguments but --nproc; a signal is passed on to every rank. A
// failed rank is a DistributedError naming it; otherwise the exit code is
// the ranks'. The caller checks the config first, so that a mistake in it is
// one line rather than one per rank.
void launch_local_ranks(const std::string& subcommand, const RunArgs& args, int64_t timeout_seconds);

}  // namespace mtbert::cli
