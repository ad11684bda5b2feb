#include "report/folder_runs.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "core/user_error.h"
#include "data/task_spec.h"
#include "train/run_directory.h"
#include "train/run_status.h"

namespace mtbert {

namespace fs = std::filesystem;

std::string run_group(const std::string& name) {
  static const std::regex seed_suffix("-seed[0-9]+$");
  return std::regex_replace(name, seed_suffix, "");
}

namespace {

// The tasks of a finished run's best dev evaluation (summary.json).
void add_tasks(const nlohmann::json& summary, std::set<std::string>& tasks) {
  const auto best = summary.find("best");
  if (best == summary.end() || !best->is_object()) return;
  const auto dev = best->find("dev");
  if (dev == best->end() || !dev->is_object()) return;
  for (const auto& [task, value] : dev->items())
    if (value.is_object()) tasks.insert(task);
}

// The built-in tasks in their usual order (sst, para, sts, cfimdb), then
// any others by name.
std::vector<std::string> task_order(const std::set<std::string>& tasks) {
  std::vector<std::string> ordered;
  for (const auto& name : builtin_task_names())
    if (tasks.count(name)) ordered.push_back(name);
  for (const auto& name : tasks)
    if (std::find(ordered.begin(), ordered.end(), name) == ordered.end()) ordered.push_back(name);
  return ordered;
}

}  // namespace

FolderRuns folder_runs(const fs::path& root) {
  FolderRuns out;
  std::set<std::string> tasks;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    if (!entry.is_directory(ec)) continue;
    const RunState state = inspect_run(entry.path());
    if (state.status == RunStatus::missing || RunDirectory(entry.path()).is_pretraining()) continue;
    SweepRun run;
    run.name = entry.path().filename().string();
    run.group = run_group(run.name);
    run.folder = entry.path();
    out.runs.push_back(std::move(run));
    if (run_is_done(state.status)) add_tasks(state.summary, tasks);
  }
  if (ec) throw UserError(fmt::format("--runs {}: cannot list it: {}", root.string(), ec.message()));
  if (out.runs.empty())
    throw UserError(fmt::format("--runs {} holds no run folders (folders with a config.resolved.yaml or "
                                "summary.json); give the folder of a sweep's runs, e.g. its output_root",
                                root.string()));
  std::sort(out.runs.begin(), out.runs.end(), [](const SweepRun& a, const SweepRun& b) { return a.name < b.name; });

  ReportTable& table = out.table;
  table.source = root;
  table.title = fmt::format("Runs in {}", root.string());
  table.columns.push_back(ReportColumn{"overall", "Overall"});
  for (const auto& task : task_order(tasks)) table.columns.push_back(ReportColumn{task, task});
  for (const auto& run : out.runs)
    if (std::none_of(table.rows.begin(), table.rows.end(), [&](const ReportRow& row) { return row.run == run.group; })) {
      ReportRow row;
      row.label = row.run = run.group;
      table.rows.push_back(std::move(row));
    }
  return out;
}

}  // namespace mtbert
