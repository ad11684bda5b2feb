#pragma once
// A sweep as a Slurm job array: one `mtbert train` per array task, so that a
// cluster's scheduler spreads the runs over its machines. Each task decides
// when it starts, from its run folder, what `mtbert sweep` would: nothing for
// a finished run, `train --resume` for an interrupted one (a job preempted or
// out of time, once requeued or resubmitted), a fresh start otherwise (a run
// that failed before its first checkpoint is cleared first, train.log kept).
// Output goes to the run's train.log, as with a local sweep.
//
// A data-parallel run (`nodes` > 1 or `gpus_per_run` > 0) is one `srun` of
// that many tasks inside its array task, over `nodes` nodes (gpus_per_run /
// nodes tasks and GPUs on each; one task per node without GPUs), rank 0's
// node as MASTER_ADDR and a port derived from the job id; mtbert reads its
// rank from srun's variables.
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/sweep_expansion.h"
#include "sweep/sweep_spec.h"

namespace mtbert {

struct SlurmScriptOptions {
  std::filesystem::path executable;         // absolute: the mtbert the tasks run (overridable by $MTBERT)
  std::filesystem::path working_directory;  // absolute: where relative paths in the commands start
  std::filesystem::path log_folder;         // absolute: Slurm's own output files (slurm-<job>_<task>.out)
  std::string command;                      // the command line that wrote the script, for its header
  int nodes = 1;                            // nodes per run
  int gpus_per_run = 0;                     // 0: CPU; else ranks (one GPU each) per run, a multiple of nodes
};

// UserError unless `nodes` and `gpus_per_run` describe whole nodes.
void check_slurm_shape(int nodes, int gpus_per_run);

// The script's text; array task i trains runs[i].
std::string slurm_array_script(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                               const std::vector<std::filesystem::path>& overlays, const SlurmScriptOptions& options);

}  // namespace mtbert
