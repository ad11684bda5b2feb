#pragma once
// What a table's rows claim to vary, checked against what their runs trained.
// The rows' experiment files (as the sweep runs them, without overlays) set
// some keys differently, e.g. train.lr; an overlay or override applied to
// every run (a smoke overlay's lr) can set such a key to one value for all
// of them, and the rows then differ in name only. mtbert report warns.
#include <filesystem>
#include <string>
#include <vector>

#include "report/report_results.h"
#include "report/report_table.h"
#include "sweep/sweep_spec.h"

namespace mtbert {

struct ErasedDifference {
  std::string key;                       // e.g. "train.lr"
  std::vector<std::string> intended;     // the rows' own values, each once, in row order
  std::string trained;                   // the one value every trained run has
};

// The keys whose values the rows' experiments set differently but every
// trained run (of `result`, with a config.resolved.yaml) has the same value
// of. Rows without a trained run are left out; the run name, output folder
// and seed are not compared.
std::vector<ErasedDifference> erased_differences(const ReportResult& result, const SweepSpec& sweep);

}  // namespace mtbert
