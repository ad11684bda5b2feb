#include "sweep/slurm_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/runtime.h"
#include "core/user_error.h"
#include "sweep/sweep_plan.h"

namespace mtbert {

namespace {

std::string quoted_words(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const auto& w : words) quoted.push_back(shell_quoted(w));
  return fmt::format("{}", fmt::join(quoted, " "));
}

// The tail of every task: the decision mtbert sweep makes, made by mtbert
// itself (`mtbert status`) when the task starts. What to do with a folder
// without checkpoints/last is left to `mtbert train --out`: it starts a new
// run, starts again one that stopped before its first checkpoint (keeping
// train.log), and refuses one that another process trains or whose
// checkpoints/last was removed by hand (its best checkpoint is kept).
constexpr const char* kTaskBody = R"BASH(
state=$("$mtbert" status "$run")
read -r status action _ <<<"$state"
case "$action" in
  skip) echo "$run is $status: nothing to do"; exit 0 ;;
  resume) args=(train --resume "$run") ;;
  *) args=("${start[@]}") ;;
esac
mkdir -p "$run"
echo "=== $(date '+%Y-%m-%d %H:%M:%S') slurm job ${SLURM_ARRAY_JOB_ID:-?}_${SLURM_ARRAY_TASK_ID} on $(hostname): $mtbert ${args[*]}" >>"$run/train.log"
exec "${launch[@]}" "$mtbert" "${args[@]}" --threads "${SLURM_CPUS_PER_TASK:-0}" --no-progress >>"$run/train.log" 2>&1
)BASH";

// The #SBATCH lines and the `launch` prefix of a run's command.
std::string resources(const SlurmScriptOptions& options) {
  if (options.nodes == 1 && options.gpus_per_run == 0) return "";
  const int per_node = options.gpus_per_run > 0 ? options.gpus_per_run / options.nodes : 1;
  std::string s = fmt::format("# Each run trains data-parallel: {} rank(s) on each of {} node(s){}.\n", per_node,
                              options.nodes, options.gpus_per_run > 0 ? ", one GPU each" : "");
  s += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n", options.nodes, per_node);
  if (options.gpus_per_run > 0) s += fmt::format("#SBATCH --gres=gpu:{}\n", per_node);
  return s;
}

std::string launch_prefix(const SlurmScriptOptions& options) {
  if (options.nodes == 1 && options.gpus_per_run == 0) return "launch=()\n";
  const int per_node = options.gpus_per_run > 0 ? options.gpus_per_run / options.nodes : 1;
  std::string s = "# Rank 0 runs on the first node; the port differs between jobs sharing a node.\n";
  s += "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  s += "export MASTER_PORT=$((20000 + ${SLURM_JOB_ID:-0} % 20000))\n";
  s += fmt::format("launch=(srun --nodes={} --ntasks={} --ntasks-per-node={} --kill-on-bad-exit=1)\n", options.nodes,
                   options.nodes * per_node, per_node);
  return s;
}

}  // namespace

void check_slurm_shape(int nodes, int gpus_per_run) {
  if (nodes < 1) throw UserError(fmt::format("--nodes must be at least 1, got {}", nodes));
  if (gpus_per_run < 0) throw UserError(fmt::format("--gpus-per-run must be at least 0, got {}", gpus_per_run));
  if (gpus_per_run > 0 && gpus_per_run % nodes != 0)
    throw UserError(fmt::format("--gpus-per-run {} cannot be spread evenly over --nodes {}: give a multiple of it",
                                gpus_per_run, nodes));
}

std::string slurm_array_script(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                               const std::vector<std::filesystem::path>& overlays, const SlurmScriptOptions& options) {
  std::string s = "#!/usr/bin/env bash\n";
  s += fmt::format("# Sweep {} ({}): {} run(s) as a Slurm job array, one `mtbert train` per array task.\n", spec.name,
                   spec.source.string(), runs.size());
  s += fmt::format("# Written by: {}\n", options.command);
  s += "# Submit it (from any folder), adding the resources your cluster needs, e.g.\n";
  s += "#   sbatch --partition=gpu --gres=gpu:1 --cpus-per-task=8 --time=12:00:00 THIS_SCRIPT\n";
  s += "# Each task trains one run into its folder, output in <run>/train.log: nothing when the run is\n";
  s += "# finished, --resume when it has a checkpoint (after a preemption or a time limit), a new run\n";
  s += "# otherwise. Submitting the script again continues what is unfinished. MTBERT=path picks another binary.\n";
  s += fmt::format("#SBATCH --job-name={}\n", spec.name);
  s += fmt::format("#SBATCH --array=0-{}\n", runs.size() - 1);
  s += fmt::format("#SBATCH --output={}\n", (options.log_folder / "slurm-%A_%a.out").string());
  s += "# SIGTERM two minutes before the time limit: mtbert saves a checkpoint and stops.\n";
  s += "#SBATCH --signal=B:TERM@120\n";
  s += resources(options);
  s += "set -euo pipefail\n";
  s += fmt::format("cd {}\n", shell_quoted(options.working_directory.string()));
  s += fmt::format("mtbert=\"${{MTBERT:-{}}}\"\n", options.executable.string());
  s += launch_prefix(options) + "\n";
  s += "case \"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\" in\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    s += fmt::format("  {}) run={}\n", i, shell_quoted(runs[i].folder.string()));
    s += fmt::format("     start=({}) ;;\n", quoted_words(start_arguments(runs[i], overlays)));
  }
  s += "  *) echo \"this sweep has no array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n";
  s += "esac\n";
  s += kTaskBody;
  return s;
}

}  // namespace mtbert
