#pragma once
// Each row of a filled-in report against a reference row: the difference of
// every column with its paired-bootstrap interval over dev examples
// (report/paired_bootstrap.h), from the dev predictions of every finished
// run of both rows (report/dev_outcomes.h).
#include <string>

#include "report/report_results.h"

namespace mtbert {

// Fills `against` (or `not_compared`) of every row and `result.comparison`;
// while the reference row has no finished run, every other row is "not
// compared" for that reason. UserError when `against_label` is no row's label
// (listing them), or names a test-split row.
void compare_rows(ReportResult& result, const std::string& against_label, const BootstrapOptions& options);

}  // namespace mtbert
