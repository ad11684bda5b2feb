#include "report/report_results.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/did_you_mean.h"
#include "core/user_error.h"
#include "sweep/sweep_expansion.h"

namespace mtbert {

namespace {

// The metric of `column` in a finished run's summary.json, when it is there.
std::optional<double> metric(const nlohmann::json& summary, const std::string& split, const std::string& column) {
  const nlohmann::json* scores = nullptr;
  if (split == "dev") {
    const auto best = summary.find("best");
    if (best == summary.end()) return std::nullopt;
    if (column == "overall") {
      const auto overall = best->find("overall");
      return overall != best->end() && overall->is_number() ? std::optional<double>(overall->get<double>()) : std::nullopt;
    }
    const auto dev = best->find("dev");
    if (dev == best->end()) return std::nullopt;
    scores = &*dev;
  } else {
    const auto test = summary.find("test");
    if (test == summary.end()) return std::nullopt;
    scores = &*test;
    if (column == "overall") {
      const auto overall = scores->find("overall");
      return overall != scores->end() && overall->is_number() ? std::optional<double>(overall->get<double>())
                                                              : std::nullopt;
    }
  }
  const auto task = scores->find(column);
  if (task == scores->end() || !task->is_object() || !task->contains("value")) return std::nullopt;
  return (*task)["value"].get<double>();
}

}  // namespace

ReportResult collect_report(const ReportTable& table, const SweepSpec& sweep, const std::filesystem::path& runs_root) {
  return collect_report(table, expand_sweep(sweep, runs_root), runs_root, sweep.source);
}

ReportResult collect_report(const ReportTable& table, const std::vector<SweepRun>& runs,
                            const std::filesystem::path& runs_root, const std::filesystem::path& sweep) {
  std::vector<std::string> names;
  for (const auto& run : runs) {
    if (std::find(names.begin(), names.end(), run.group) == names.end()) names.push_back(run.group);
    if (run.name != run.group) names.push_back(run.name);
  }

  ReportResult result;
  result.table = &table;
  result.runs_root = runs_root;
  result.sweep = sweep;
  std::set<std::string> tags;
  std::set<std::string> tasks;  // of the finished runs: what a column may name
  bool all_runs_finished = true;
  for (size_t index = 0; index < table.rows.size(); ++index) {
    const ReportRow& row = table.rows[index];
    ReportRowResult out;
    out.row = &row;
    std::map<std::string, std::vector<double>> values;
    std::set<std::string> row_tags;
    bool any_finished = false;
    for (const auto& run : runs) {
      if (run.group != row.run && run.name != row.run) continue;
      const RunState state = inspect_run(run.folder);
      out.runs.push_back(RowRun{run.name, run.folder, state.status});
      row_tags.insert(state.tags.begin(), state.tags.end());
      if (!run_is_done(state.status)) continue;
      any_finished = true;
      ++out.finished;
      for (const char* part : {"best", "test"}) {
        const auto scores = state.summary.find(part);
        if (scores == state.summary.end() || !scores->is_object()) continue;
        const auto& by_task = std::string(part) == "best" ? scores->value("dev", nlohmann::json::object()) : *scores;
        for (const auto& [task, value] : by_task.items())
          if (value.is_object()) tasks.insert(task);
      }
      for (const auto& column : table.columns)
        if (const auto value = metric(state.summary, row.split, column.key)) values[column.key].push_back(*value);
    }
    all_runs_finished = all_runs_finished && out.finished == static_cast<int64_t>(out.runs.size());
    if (out.runs.empty())
      throw UserError(fmt::format("{}: rows[{}].run: no run \"{}\" in sweep {}{} (its runs: {})",
                                  row.run_origin.describe(), index, row.run, sweep.string(),
                                  did_you_mean_suffix(row.run, names),
                                  fmt::join(names, ", ")));
    for (const auto& column : table.columns) {
      ReportCell cell;
      if (const auto it = row.paper.find(column.key); it != row.paper.end()) cell.paper = it->second;
      const auto& v = values[column.key];
      cell.n = static_cast<int64_t>(v.size());
      cell.not_evaluated = any_finished && v.empty();
      if (!v.empty()) {
        double sum = 0;
        for (const double x : v) sum += x;
        cell.mean = sum / static_cast<double>(v.size());
        if (v.size() > 1) {
          double squares = 0;
          for (const double x : v) squares += (x - cell.mean) * (x - cell.mean);
          cell.stddev = std::sqrt(squares / static_cast<double>(v.size() - 1));
        }
      }
      out.cells[column.key] = cell;
    }
    out.tags.assign(row_tags.begin(), row_tags.end());
    tags.insert(row_tags.begin(), row_tags.end());
    result.rows.push_back(std::move(out));
  }
  // A column no run reports (a misspelled task) would read n/a in every row,
  // as if the runs had not evaluated it. Known once every run has finished:
  // before, a column may belong to the rows still training.
  if (all_runs_finished && !table.rows.empty())
    for (const auto& column : table.columns) {
      if (column.key == "overall" || tasks.count(column.key)) continue;
      std::vector<std::string> known(tasks.begin(), tasks.end());
      known.push_back("overall");
      throw UserError(fmt::format("{}: columns.{}: none of the runs reports a task \"{}\"{} (the columns may name {})",
                                  table.source.string(), column.key, column.key,
                                  did_you_mean_suffix(column.key, known), fmt::join(known, ", ")));
    }
  result.tags.assign(tags.begin(), tags.end());
  return result;
}

}  // namespace mtbert
