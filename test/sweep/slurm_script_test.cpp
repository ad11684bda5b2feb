// The Slurm array script, run by bash as Slurm would (SLURM_ARRAY_TASK_ID set)
// with a stand-in for mtbert that records its arguments (and passes `status`
// on to the real mtbert, whom the script asks): each task skips, resumes or
// starts its run as the run folder says.
#include "sweep/slurm_script.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/runtime.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Fixture {
  mtbert::test::TempDir dir;
  fs::path script;

  explicit Fixture(int nodes = 1, int gpus_per_run = 0) {
    const auto fake = dir.write("fake-mtbert", "#!/bin/bash\nif [[ $1 == status ]]; then exec " +
                                                   mtbert::shell_quoted(mtbert::test::mtbert_binary().string()) +
                                                   " \"$@\"; fi\necho \"$*\" >> \"$(dirname \"$0\")/calls\"\n");
    fs::permissions(fake, fs::perms::owner_all);
    fs::create_directories(dir / "sweeps");
    const auto spec = mtbert::load_sweep(
        dir.write("sweeps/t.yaml", "name: t\nexperiments: [../a.yaml, ../b.yaml]\nseeds: [7]\n"));
    const auto runs = mtbert::expand_sweep(spec, "runs/t");
    mtbert::SlurmScriptOptions options;
    options.executable = "/nonexistent/mtbert";  // replaced by $MTBERT below
    options.working_directory = dir.path();
    options.log_folder = dir / "runs" / "t";
    options.command = "mtbert sweep sweeps/t.yaml --emit slurm";
    options.nodes = nodes;
    options.gpus_per_run = gpus_per_run;
    script = dir.write("t.sbatch", mtbert::slurm_array_script(spec, runs, {"smoke.yaml"}, options));
  }

  // Runs array task `task`; returns what the fake mtbert was called with.
  std::string run_task(int task) {
    fs::remove(dir / "calls");
    // Stand-ins for srun (records its options, runs the command) and scontrol.
    fs::create_directories(dir / "bin");
    const auto srun = dir.write("bin/srun", "#!/bin/bash\nopts=()\nwhile [[ $1 == --* ]]; do opts+=(\"$1\"); shift; done\n"
                                            "echo \"srun ${opts[*]} MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT\" "
                                            ">> \"$(dirname \"$0\")/../calls\"\nexec \"$@\"\n");
    const auto scontrol = dir.write("bin/scontrol", "#!/bin/bash\nprintf 'node17\\nnode18\\n'\n");
    fs::permissions(srun, fs::perms::owner_all);
    fs::permissions(scontrol, fs::perms::owner_all);
    const std::string command = fmt::format("cd / && PATH={}:$PATH MTBERT={} SLURM_ARRAY_TASK_ID={} SLURM_JOB_ID=20042 "
                                            "SLURM_JOB_NODELIST='node[17-18]' SLURM_CPUS_PER_TASK=4 bash {} >{} 2>&1",
                                            (dir / "bin").string(), (dir / "fake-mtbert").string(), task,
                                            script.string(), (dir / "out").string());
    REQUIRE(std::system(command.c_str()) == 0);
    return fs::exists(dir / "calls") ? read(dir / "calls") : "";
  }
};

}  // namespace

TEST_CASE("the script is one array task per run", "[slurm_script]") {
  Fixture f;
  const std::string text = read(f.script);
  CHECK(text.find("#SBATCH --job-name=t\n") != std::string::npos);
  CHECK(text.find("#SBATCH --array=0-1\n") != std::string::npos);
  CHECK(text.find("#SBATCH --output=" + (f.dir / "runs" / "t" / "slurm-%A_%a.out").string() + "\n") != std::string::npos);
  CHECK(text.find("# Written by: mtbert sweep sweeps/t.yaml --emit slurm\n") != std::string::npos);
  CHECK(text.find("  1) run=runs/t/b-seed7\n     start=(train " + (f.dir / "b.yaml").string() +
                  " --overlay smoke.yaml seed=7 name=b-seed7 --out runs/t/b-seed7) ;;\n") != std::string::npos);
}

TEST_CASE("an array task starts, resumes, restarts or skips its run", "[slurm_script]") {
  Fixture f;
  const fs::path run = f.dir / "runs" / "t" / "b-seed7";
  // Nothing there yet: a new run, from the working directory, the log in the run folder.
  CHECK(f.run_task(1) == "train " + (f.dir / "b.yaml").string() +
                             " --overlay smoke.yaml seed=7 name=b-seed7 --out runs/t/b-seed7 --threads 4 --no-progress\n");
  CHECK(read(run / "train.log").find("slurm job ?_1 on ") != std::string::npos);

  // Interrupted: a checkpoint to resume from.
  fs::create_directories(run / "checkpoints" / "last");
  std::ofstream(run / "summary.json") << R"({"status": "interrupted"})";
  CHECK(f.run_task(1) == "train --resume runs/t/b-seed7 --threads 4 --no-progress\n");

  // Finished: nothing to do, however summary.json is laid out.
  std::ofstream(run / "summary.json") << "{\n  \"status\": \"finished\"\n}\n";
  CHECK(f.run_task(1).empty());
  CHECK(read(f.dir / "out").find("is finished") != std::string::npos);
  std::ofstream(run / "summary.json") << R"({"status":"early_stopped"})";
  CHECK(f.run_task(1).empty());
  CHECK(read(f.dir / "out").find("is early_stopped") != std::string::npos);

  // Failed before its first checkpoint: started again with `train --out`,
  // which clears the folder itself, keeping train.log (or refuses one whose
  // checkpoints/last was removed by hand: cli.train_test): the script
  // removes nothing.
  const fs::path other = f.dir / "runs" / "t" / "a-seed7";
  fs::create_directories(other / "checkpoints" / "best");
  std::ofstream(other / "config.resolved.yaml") << "x";
  std::ofstream(other / "train.log") << "first attempt\n";
  CHECK(f.run_task(0).find("train " + (f.dir / "a.yaml").string()) == 0);
  CHECK(fs::exists(other / "checkpoints" / "best"));
  CHECK(read(other / "train.log").find("first attempt\n") == 0);

  // No such task.
  const std::string command = fmt::format("SLURM_ARRAY_TASK_ID=5 bash {} >/dev/null 2>&1", f.script.string());
  CHECK(WEXITSTATUS(std::system(command.c_str())) == 2);
}

TEST_CASE("a data-parallel run is one srun of its ranks over its nodes", "[slurm_script]") {
  Fixture f(2, 8);
  const std::string text = read(f.script);
  CHECK(text.find("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gres=gpu:4\n") != std::string::npos);
  CHECK(text.find("#SBATCH --nodes=2") < text.find("\nset -euo pipefail"));  // sbatch reads only the header
  CHECK(f.run_task(1) == "srun --nodes=2 --ntasks=8 --ntasks-per-node=4 --kill-on-bad-exit=1 MASTER_ADDR=node17 "
                         "MASTER_PORT=20042\ntrain " +
                             (f.dir / "b.yaml").string() +
                             " --overlay smoke.yaml seed=7 name=b-seed7 --out runs/t/b-seed7 --threads 4 --no-progress\n");
}

TEST_CASE("CPU runs over several nodes: one rank per node", "[slurm_script]") {
  Fixture f(3, 0);
  const std::string text = read(f.script);
  CHECK(text.find("#SBATCH --nodes=3\n#SBATCH --ntasks-per-node=1\n") != std::string::npos);
  CHECK(text.find("#SBATCH --gres") == std::string::npos);
  CHECK(text.find("launch=(srun --nodes=3 --ntasks=3 --ntasks-per-node=1 --kill-on-bad-exit=1)") != std::string::npos);
}

TEST_CASE("GPUs that do not spread evenly over the nodes are refused", "[slurm_script]") {
  CHECK_THROWS_WITH(mtbert::check_slurm_shape(3, 8),
                    "--gpus-per-run 8 cannot be spread evenly over --nodes 3: give a multiple of it");
  CHECK_NOTHROW(mtbert::check_slurm_shape(2, 8));
  CHECK_NOTHROW(mtbert::check_slurm_shape(1, 0));
}
