#include "dist/launch_env.h"

#include <map>
#include <string>

#include "support/catch.h"
#include "support/user_error_of.h"

#include "core/user_error.h"

using mtbert::LaunchEnv;
using mtbert::parse_launch_env;

namespace {

using Vars = std::map<std::string, std::string>;

LaunchEnv parse(const Vars& vars) {
  return parse_launch_env([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

// The one-line message of the UserError that parsing `vars` throws.
std::string error_of(const Vars& vars) {
  return mtbert::test::user_error_of([&] { parse(vars); });
}

}  // namespace

TEST_CASE("no launcher variables: a single process", "[dist]") {
  const LaunchEnv env = parse({{"HOME", "/root"}});
  CHECK(env.launcher == "none");
  CHECK(env.rank == 0);
  CHECK(env.world_size == 1);
  CHECK_FALSE(env.distributed());
}

TEST_CASE("torchrun's variables", "[dist]") {
  const LaunchEnv env = parse({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                               {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}});
  CHECK(env.launcher == "torchrun");
  CHECK(env.rank == 3);
  CHECK(env.world_size == 8);
  CHECK(env.local_rank == 1);
  CHECK(env.local_world_size == 2);
  CHECK(env.master_addr == "node7");
  CHECK(env.master_port == 29400);
  CHECK(env.distributed());
  CHECK_FALSE(env.agent_store);
}

TEST_CASE("torchrun's agent store: every rank a client, keyed by the restart", "[dist]") {
  const LaunchEnv env = parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "29400"},
                               {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "3"}});
  CHECK(env.agent_store);
  CHECK(env.restart == 3);
}

TEST_CASE("a torchrun world of one needs no master address", "[dist]") {
  const LaunchEnv env = parse({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
  CHECK(env.launcher == "torchrun");
  CHECK_FALSE(env.distributed());
}

TEST_CASE("srun's variables, the master from SLURM_LAUNCH_NODE_IPADDR and a port from the job id", "[dist]") {
  const LaunchEnv env = parse({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                               {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.4"}, {"SLURM_JOB_ID", "123456"}});
  CHECK(env.launcher == "slurm");
  CHECK(env.rank == 5);
  CHECK(env.world_size == 8);
  CHECK(env.local_rank == 1);
  CHECK(env.master_addr == "10.0.0.4");
  CHECK(env.master_port == 20000 + 123456 % 20000);
}

TEST_CASE("srun: MASTER_ADDR and MASTER_PORT win, and the step's task count wins over the allocation's", "[dist]") {
  const LaunchEnv env = parse({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "16"}, {"SLURM_STEP_NUM_TASKS", "2"},
                               {"SLURM_LAUNCH_NODE_IPADDR", "10.0.0.4"}, {"MASTER_ADDR", "10.0.0.9"},
                               {"MASTER_PORT", "31000"}});
  CHECK(env.world_size == 2);
  CHECK(env.master_addr == "10.0.0.9");
  CHECK(env.master_port == 31000);
}

TEST_CASE("srun without a job id: PyTorch's default port", "[dist]") {
  CHECK(parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "h"}}).master_port == 29500);
}

TEST_CASE("torchrun's variables win over Slurm's (torchrun inside an allocation)", "[dist]") {
  const LaunchEnv env = parse({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1234"},
                               {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}});
  CHECK(env.launcher == "torchrun");
  CHECK(env.rank == 1);
}

TEST_CASE("bad values are one line naming the variable", "[dist]") {
  CHECK(error_of({{"RANK", "x1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}) ==
        "RANK=\"x1\" is not a whole number (torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT)");
  CHECK_THAT(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
             Catch::Matchers::StartsWith("RANK=2 is out of range: it must be between 0 and 1"));
  CHECK_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Catch::Matchers::StartsWith("WORLD_SIZE=0 is out of range"));
  CHECK_THAT(error_of({{"RANK", "0"}}), Catch::Matchers::StartsWith("RANK is set but WORLD_SIZE is not"));
  CHECK_THAT(error_of({{"WORLD_SIZE", "2"}}), Catch::Matchers::StartsWith("WORLD_SIZE is set but RANK is not"));
  CHECK_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}),
             Catch::Matchers::StartsWith("WORLD_SIZE=2 needs MASTER_ADDR and MASTER_PORT"));
  CHECK_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
             Catch::Matchers::StartsWith("MASTER_PORT=70000 is out of range"));
  CHECK_THAT(error_of({{"SLURM_PROCID", "0"}}), Catch::Matchers::StartsWith("SLURM_PROCID is set but SLURM_NTASKS is not"));
  CHECK_THAT(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}),
             Catch::Matchers::StartsWith("SLURM_NTASKS=2 needs rank 0's address: set MASTER_ADDR"));
  CHECK_THAT(error_of({{"SLURM_PROCID", "-1"}, {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "h"}}),
             Catch::Matchers::StartsWith("SLURM_PROCID=-1 is out of range"));
}

TEST_CASE("ranks of one machine share its cores", "[dist]") {
  LaunchEnv alone;
  LaunchEnv crowded;
  crowded.local_world_size = 1 << 20;
  CHECK(mtbert::default_rank_threads(alone) >= 1);
  CHECK(mtbert::default_rank_threads(crowded) == 1);
}
