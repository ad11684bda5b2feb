#pragma once
// A report without a table file (mtbert report --runs DIR): the run folders
// of DIR (any sweep's, or runs trained by hand into it), one row per run
// group over its seeds (a run's name without -seed<N>, as sweeps name them),
// and a column for the overall score and for each task the runs report.
#include <filesystem>
#include <string>
#include <vector>

#include "report/report_table.h"
#include "sweep/sweep_expansion.h"

namespace mtbert {

// "baseline-lr2e-05" for "baseline-lr2e-05-seed3"; a name without the
// suffix is its own group.
std::string run_group(const std::string& name);

struct FolderRuns {
  std::vector<SweepRun> runs;  // name, group and folder; by name
  ReportTable table;           // rows by group, in the runs' order; columns: overall, then the tasks
};

// The fine-tuning run folders directly under `root` (those with a
// config.resolved.yaml or summary.json; pretraining runs are left out).
// UserError when there is none.
FolderRuns folder_runs(const std::filesystem::path& root);

}  // namespace mtbert
