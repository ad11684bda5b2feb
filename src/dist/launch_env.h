#pragma once
// Where this process stands in a data-parallel job, read from the environment
// its launcher set:
//
//   torchrun (and mtbert train --nproc)  RANK, WORLD_SIZE, LOCAL_RANK,
//                                         LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
//   srun                                  SLURM_PROCID, SLURM_STEP_NUM_TASKS (or
//                                         SLURM_NTASKS), SLURM_LOCALID; the master
//                                         address from MASTER_ADDR or else
//                                         SLURM_LAUNCH_NODE_IPADDR, the port from
//                                         MASTER_PORT or else one derived from
//                                         SLURM_JOB_ID (two jobs on one node differ)
//
// torchrun's variables win when both are present (torchrun inside an
// allocation). Without either, or with a world of one, the process trains
// alone. A malformed value is a UserError naming the variable.
#include <functional>
#include <string>

namespace mtbert {

struct LaunchEnv {
  std::string launcher = "none";  // "torchrun", "slurm" or "none"
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // ranks on this machine; 1 when the launcher does not say
  std::string master_addr;   // rank 0's host, where the rendezvous store listens
  int master_port = 0;
  // torchrun's own agent already serves the rendezvous store at
  // MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE): every rank joins
  // it as a client, keyed by the restart (TORCHELASTIC_RESTART_COUNT).
  bool agent_store = false;
  int restart = 0;

  bool distributed() const { return world_size > 1; }
};

// `getenv` returns a variable's value or null (a parameter, so that tests
// need not touch the process's environment).
LaunchEnv parse_launch_env(const std::function<const char*(const char*)>& getenv);

// The same from this process's environment.
LaunchEnv launch_env();

// The intra-op threads a rank uses when told "one per core": the cores this
// process may run on, shared among the ranks of its machine (at least 1).
int default_rank_threads(const LaunchEnv& env);

}  // namespace mtbert
