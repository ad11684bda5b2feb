#include "dist/launch_env.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "core/thread_count.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

// PyTorch's default rendezvous port, and the range job-derived ports use.
constexpr int kDefaultPort = 29500;
constexpr int kJobPortBase = 20000, kJobPortSpan = 20000;

class EnvReader {
 public:
  explicit EnvReader(const std::function<const char*(const char*)>& getenv) : getenv_(getenv) {}

  bool has(const char* name) const {
    const char* v = getenv_(name);
    return v != nullptr && *v != '\0';
  }
  std::string text(const char* name) const { return has(name) ? getenv_(name) : ""; }

  // A whole number in [min, max]; `hint` says who sets the variable.
  int number(const char* name, long min, long max, const char* hint) const {
    const std::string value = text(name);
    errno = 0;
    char* end = nullptr;
    const long n = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || errno != 0 || *end != '\0')
      throw UserError(fmt::format("{}=\"{}\" is not a whole number ({})", name, value, hint));
    if (n < min || n > max)
      throw UserError(fmt::format("{}={} is out of range: it must be between {} and {} ({})", name, n, min, max, hint));
    return static_cast<int>(n);
  }

 private:
  const std::function<const char*(const char*)>& getenv_;
};

constexpr long kMaxRanks = 1 << 20;

void read_master(const EnvReader& env, LaunchEnv& out, const char* hint) {
  if (env.has("MASTER_ADDR")) out.master_addr = env.text("MASTER_ADDR");
  if (env.has("MASTER_PORT")) out.master_port = env.number("MASTER_PORT", 1, 65535, hint);
}

LaunchEnv from_torchrun(const EnvReader& env) {
  const char* hint = "torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT";
  LaunchEnv out;
  out.launcher = "torchrun";
  if (!env.has("RANK") || !env.has("WORLD_SIZE"))
    throw UserError(fmt::format("{} is set but {} is not ({})", env.has("RANK") ? "RANK" : "WORLD_SIZE",
                                env.has("RANK") ? "WORLD_SIZE" : "RANK", hint));
  out.world_size = env.number("WORLD_SIZE", 1, kMaxRanks, hint);
  out.rank = env.number("RANK", 0, out.world_size - 1, hint);
  out.local_rank = env.has("LOCAL_RANK") ? env.number("LOCAL_RANK", 0, out.world_size - 1, hint) : 0;
  out.local_world_size =
      env.has("LOCAL_WORLD_SIZE") ? env.number("LOCAL_WORLD_SIZE", 1, out.world_size, hint) : 1;
  read_master(env, out, hint);
  out.agent_store = env.text("TORCHELASTIC_USE_AGENT_STORE") == "True";
  if (env.has("TORCHELASTIC_RESTART_COUNT"))
    out.restart = env.number("TORCHELASTIC_RESTART_COUNT", 0, 0x7fffffff, hint);
  if (out.distributed() && (out.master_addr.empty() || out.master_port == 0))
    throw UserError(fmt::format("WORLD_SIZE={} needs MASTER_ADDR and MASTER_PORT, rank 0's address and port ({})",
                                out.world_size, hint));
  return out;
}

LaunchEnv from_slurm(const EnvReader& env) {
  const char* hint = "srun sets SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID";
  LaunchEnv out;
  out.launcher = "slurm";
  // The step's task count: inside a batch script SLURM_NTASKS is the whole
  // allocation's, which a process started without srun is not part of.
  const char* tasks = env.has("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
  if (!env.has(tasks)) throw UserError(fmt::format("SLURM_PROCID is set but SLURM_NTASKS is not ({})", hint));
  out.world_size = env.number(tasks, 1, kMaxRanks, hint);
  out.rank = env.number("SLURM_PROCID", 0, out.world_size - 1, hint);
  out.local_rank = env.has("SLURM_LOCALID") ? env.number("SLURM_LOCALID", 0, out.world_size - 1, hint) : 0;
  read_master(env, out, hint);
  if (out.master_addr.empty()) out.master_addr = env.text("SLURM_LAUNCH_NODE_IPADDR");
  if (out.master_port == 0)
    out.master_port = env.has("SLURM_JOB_ID")
                          ? kJobPortBase + env.number("SLURM_JOB_ID", 0, 0x7fffffff, hint) % kJobPortSpan
                          : kDefaultPort;
  if (out.distributed() && out.master_addr.empty())
    throw UserError(fmt::format("{}={} needs rank 0's address: set MASTER_ADDR (e.g. the first host of "
                                "$SLURM_JOB_NODELIST), or run under srun, which sets SLURM_LAUNCH_NODE_IPADDR",
                                tasks, out.world_size));
  return out;
}

}  // namespace

LaunchEnv parse_launch_env(const std::function<const char*(const char*)>& getenv) {
  const EnvReader env(getenv);
  if (env.has("RANK") || env.has("WORLD_SIZE")) return from_torchrun(env);
  if (env.has("SLURM_PROCID")) return from_slurm(env);
  return LaunchEnv{};
}

LaunchEnv launch_env() {
  return parse_launch_env([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

int default_rank_threads(const LaunchEnv& env) {
  return std::max(1, available_cores() / std::max(1, env.local_world_size));
}

}  // namespace mtbert
