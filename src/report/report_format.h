#pragma once
// A filled-in report table as text: a GitHub Markdown table, CSV (one line per
// row, six significant digits, for scripts) or a LaTeX table with booktabs
// rules.
// Every format gives, per column, the paper's number, ours and ours minus the
// paper's; ours is "mean ± std" (sample standard deviation) when several runs
// (seeds) finished, and rows with missing or unfinished runs say which.
// Runs tagged `smoke` get a banner (Markdown, LaTeX) or a tags column (CSV):
// their numbers prove the pipeline, not the papers' results; runs tagged
// `small` (experiments/small.yaml) a shorter one naming their setting.
#include <string>

#include "report/report_results.h"

namespace mtbert {

enum class ReportFormat { markdown, csv, latex };

// "md", "csv", "latex"; UserError for anything else.
ReportFormat report_format_from_name(const std::string& name);

std::string format_report(const ReportResult& result, ReportFormat format);

// Whether any run of the report carries the smoke tag.
bool report_has_smoke_runs(const ReportResult& result);

}  // namespace mtbert
