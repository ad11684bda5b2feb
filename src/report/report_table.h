#pragma once
// A table of a report, as a file under experiments/tables/: the paper's
// layout and numbers, and which runs of a sweep give ours.
//
//   title: "minBERT and Downstream Tasks Final Report, Table 1"
//   sweep: ../sweeps/final_table1.yaml        # relative to this file
//   columns: {overall: Overall, sst: SST, para: Quora, sts: STS}
//   rows:
//     - label: Baseline
//       run: baseline                          # a run of the sweep: a name, or a name without -seed<N> (all seeds)
//       split: dev                             # dev (default) | test
//       paper: {overall: 0.635, sst: 0.453, para: 0.789, sts: 0.324}
//   against: Baseline                          # optional: the row the others are compared with
//
// A column key is a task of the runs (its metric: accuracy, or Pearson r for
// STS) or `overall`, the runs' overall score. Each run's metrics come from
// its summary.json: `best.dev` (the best dev evaluation) for dev, `test` for
// test, which holds only the tasks whose test file is labeled.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config_tree.h"

namespace mtbert {

struct ReportColumn {
  std::string key;    // a task name, or "overall"
  std::string label;  // the paper's header
};

struct ReportRow {
  std::string label;
  std::string run;
  ConfigOrigin run_origin;  // where `run` was written, for an unknown name
  std::string split = "dev";
  std::map<std::string, double> paper;  // column key -> the paper's number (absent: not reported)
};

struct ReportTable {
  std::filesystem::path source;
  std::string title;
  std::filesystem::path sweep;  // resolved against the table file's folder
  std::vector<ReportColumn> columns;
  std::vector<ReportRow> rows;
  std::string against;  // a row's label, or "": no comparison unless `mtbert report --against` asks
};

// Reads and checks a table file; UserError naming file, line and key.
ReportTable load_report_table(const std::filesystem::path& path);

}  // namespace mtbert
