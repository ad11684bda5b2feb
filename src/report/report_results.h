#pragma once
// A report table filled in: for every row the runs of the sweep behind it,
// where each stands, and per column the paper's number and ours (mean and
// sample standard deviation over the row's finished runs, usually its seeds).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/paired_bootstrap.h"
#include "report/report_table.h"
#include "sweep/sweep_expansion.h"
#include "sweep/sweep_spec.h"
#include "train/run_status.h"

namespace mtbert {

struct RowRun {
  std::string name;
  std::filesystem::path folder;
  RunStatus status = RunStatus::missing;
};

struct ReportCell {
  std::optional<double> paper;
  int64_t n = 0;       // finished runs with this metric
  double mean = 0;     // meaningful when n > 0
  double stddev = 0;   // sample standard deviation (n - 1); 0 when n < 2
  // n == 0 although some runs finished: the metric is not in their summary
  // (for test: the test file has no labels).
  bool not_evaluated = false;
};

struct ReportRowResult {
  const ReportRow* row = nullptr;
  std::vector<RowRun> runs;    // in sweep order
  int64_t finished = 0;        // runs that are finished or early-stopped
  std::map<std::string, ReportCell> cells;  // by column key
  std::vector<std::string> tags;  // of the row's runs, each once, sorted
  // Against the reference row (compare_rows), by column key; empty for the
  // reference itself and for rows that cannot be compared (`not_compared`).
  std::map<std::string, BootstrapDifference> against;
  std::string not_compared;  // why, e.g. "no finished runs"
};

// The reference row of the differences and how they were drawn.
struct ReportComparison {
  std::string against;  // its label
  BootstrapOptions options;
};

struct ReportResult {
  const ReportTable* table = nullptr;
  std::filesystem::path runs_root;
  std::filesystem::path sweep;  // the sweep file the runs come from (the table's, or report --sweep); none for --runs alone
  std::vector<ReportRowResult> rows;
  std::vector<std::string> tags;  // of every run that exists, each once, sorted
  std::optional<ReportComparison> comparison;
};

// Finds every row's runs among `sweep`'s (expand_sweep, under `runs_root`)
// and reads them. A row whose run matches none is a UserError at the row's
// `run:`, listing the sweep's names.
ReportResult collect_report(const ReportTable& table, const SweepSpec& sweep, const std::filesystem::path& runs_root);
// The same from runs already listed (report/folder_runs.h: a folder's runs,
// without a sweep file; `sweep` is then empty).
ReportResult collect_report(const ReportTable& table, const std::vector<SweepRun>& runs,
                            const std::filesystem::path& runs_root, const std::filesystem::path& sweep);

}  // namespace mtbert
