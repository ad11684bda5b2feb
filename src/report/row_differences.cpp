#include "report/row_differences.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/did_you_mean.h"
#include "core/user_error.h"
#include "report/dev_outcomes.h"

namespace mtbert {

namespace {

// The dev outcomes of a row's finished runs, per task: one gold vector, one
// prediction vector per run. Empty when no run finished.
std::map<std::string, TaskOutcomes> row_outcomes(const ReportRowResult& row) {
  std::map<std::string, TaskOutcomes> tasks;
  std::map<std::string, std::string> first_run;  // whose dev file the gold labels came from
  for (const RowRun& run : row.runs) {
    if (!run_is_done(run.status)) continue;
    for (auto& [name, outcome] : read_dev_outcomes(run.folder)) {
      TaskOutcomes& task = tasks[name];
      if (task.runs.empty()) {
        task.metric = outcome.metric;
        task.gold = outcome.gold;
        first_run[name] = run.name;
      } else if (task.gold != outcome.gold) {
        throw UserError(fmt::format("{}: its {} dev examples differ from those of {} (another dev file, limit or "
                                    "subset): a row's runs must predict the same examples",
                                    run.folder.string(), name, first_run[name]));
      }
      task.runs.push_back(std::move(outcome.predicted));
    }
  }
  return tasks;
}

}  // namespace

void compare_rows(ReportResult& result, const std::string& against_label, const BootstrapOptions& options) {
  std::vector<std::string> labels;
  ReportRowResult* reference = nullptr;
  for (auto& row : result.rows) {
    labels.push_back(row.row->label);
    if (row.row->label == against_label) reference = &row;
  }
  if (!reference)
    throw UserError(fmt::format("against: no row \"{}\" in {}{} (its rows: {})", against_label,
                                result.table->source.string(), did_you_mean_suffix(against_label, labels),
                                fmt::join(labels, ", ")));
  const auto refuse = [&](const std::string& why) {
    throw UserError(fmt::format("against: row \"{}\" of {} cannot be the reference: {}", against_label,
                                result.table->source.string(), why));
  };
  if (reference->row->split != "dev") refuse("its split is test, and the differences are on dev");
  const std::map<std::string, TaskOutcomes> reference_outcomes = row_outcomes(*reference);
  result.comparison = ReportComparison{against_label, options};
  if (reference_outcomes.empty()) {
    // The table is still worth printing (its missing runs listed under it);
    // the differences wait for the reference's runs.
    for (auto& row : result.rows)
      if (&row != reference) row.not_compared = "the reference has no finished run";
    return;
  }

  std::vector<std::string> columns;
  for (const auto& column : result.table->columns) columns.push_back(column.key);
  for (auto& row : result.rows) {
    if (&row == reference) continue;
    if (row.row->split != "dev") {
      row.not_compared = "test split";
      continue;
    }
    const auto outcomes = row_outcomes(row);
    if (outcomes.empty()) {
      row.not_compared = "no finished runs";
      continue;
    }
    for (const auto& [name, task] : outcomes) {
      const auto other = reference_outcomes.find(name);
      if (other != reference_outcomes.end() && other->second.gold != task.gold)
        throw UserError(fmt::format("row \"{}\": its {} dev examples differ from those of row \"{}\" (another dev "
                                    "file, limit or subset): the rows cannot be paired",
                                    row.row->label, name, against_label));
    }
    row.against = paired_bootstrap(outcomes, reference_outcomes, columns, options);
  }
}

}  // namespace mtbert
