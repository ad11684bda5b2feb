// The papers' experiments as they are shipped, without the smoke overlay: the
// rows of each table are different models, and the real data loads.
#include <cstdlib>
#include <map>
#include <set>

#include "support/catch.h"

#include "config/experiment_config.h"
#include "report/report_table.h"
#include "sweep/sweep_expansion.h"
#include "sweep/sweep_spec.h"
#include "support/test_support.h"
#include "train/experiment.h"

namespace fs = std::filesystem;
using namespace mtbert;

namespace {

std::vector<fs::path> table_files() {
  std::vector<fs::path> tables;
  for (const auto& entry : fs::directory_iterator(test::source_dir() / "experiments" / "tables"))
    if (entry.path().extension() == ".yaml") tables.push_back(entry.path());
  std::sort(tables.begin(), tables.end());
  return tables;
}

// The run of the sweep that a table row names (a run, or a group of seeds:
// its first seed).
const SweepRun& row_run(const std::vector<SweepRun>& runs, const ReportRow& row) {
  for (const auto& run : runs)
    if (run.name == row.run || run.group == row.run) return run;
  FAIL("row \"" << row.label << "\" names no run of the sweep: " << row.run);
  throw std::logic_error("unreachable");
}

// The config a run trains, without what only names it.
std::string model_and_training(const SweepRun& run) {
  ExperimentConfig config = load_experiment(run.experiment, run.overrides, {});
  config.name.clear();
  config.output_dir.clear();
  return resolved_yaml(config);
}

}  // namespace

TEST_CASE("every row of every paper table trains a config of its own", "[report][experiments]") {
  const auto tables = table_files();
  REQUIRE(tables.size() >= 3);
  for (const auto& path : tables) {
    INFO(path.filename().string());
    const ReportTable table = load_report_table(path);
    const auto runs = expand_sweep(load_sweep(table.sweep), "runs");
    std::map<std::string, std::string> config_of_run;  // rows may show one run twice (dev, test)
    for (const auto& row : table.rows) {
      const SweepRun& run = row_run(runs, row);
      if (!config_of_run.count(run.name)) config_of_run[run.name] = model_and_training(run);
    }
    REQUIRE(config_of_run.size() >= 4);
    std::map<std::string, std::string> run_of_config;
    for (const auto& [run, config] : config_of_run) {
      const auto [it, fresh] = run_of_config.emplace(config, run);
      if (!fresh) FAIL_CHECK("runs " << it->second << " and " << run << " resolve to the same config");
    }
  }
}

TEST_CASE("every paper experiment reads the real data it names", "[report][experiments][real]") {
  auto data = test::shared_data_dir();
  if (!data) MTBERT_SKIP("../shared/data is absent");
  // The experiments name their files as ${MTBERT_DATA:-../shared/data}/...
  setenv("MTBERT_DATA", fs::absolute(*data).c_str(), 1);
  std::set<fs::path> experiments;
  for (const auto& table : table_files())
    for (const auto& run : expand_sweep(load_sweep(load_report_table(table).sweep), "runs"))
      experiments.insert(run.experiment);
  REQUIRE(experiments.size() >= 10);
  for (const auto& path : experiments) {
    INFO(path.string());
    const ExperimentConfig config = load_experiment(path);
    for (const auto& task : config.tasks) {
      const TaskSpec& spec = builtin_task(task.type.empty() ? task.name : task.type);
      for (Split split : {Split::train, Split::dev, Split::test}) {
        const std::string& file = split == Split::train ? task.train : split == Split::dev ? task.dev : task.test;
        if (file.empty()) continue;
        INFO(task.name << " " << split_name(split) << ": " << file);
        TaskSplit rows;
        REQUIRE_NOTHROW(rows = read_task_split(spec, file, split_read_options(config, task, split)));
        CHECK(rows.examples.size() > 100);
        CHECK(rows.skipped_rows <= 1);  // the Quora row with an unclosed quote
      }
    }
  }
}

// The small-scale study (experiments/small.yaml, REPRODUCTION.md): each paper
// table's rows, three seeds each, under the overlay, still different models;
// the DeBERTa sweep's extra rows load their own pretrained encoders.
TEST_CASE("the small-scale sweeps run every paper row under the small overlay", "[report][experiments]") {
  const fs::path experiments = test::source_dir() / "experiments";
  const std::vector<fs::path> overlay{experiments / "small.yaml"};
  std::vector<fs::path> tables = table_files();
  tables.push_back(experiments / "tables" / "small" / "deberta_pretrained.yaml");
  tables.push_back(experiments / "tables" / "small" / "deberta_p2p.yaml");
  for (const auto& path : tables) {
    INFO(path.filename().string());
    const ReportTable table = load_report_table(path);
    const fs::path small_sweep = experiments / "sweeps" / "small" / table.sweep.filename();
    const auto runs = expand_sweep(load_sweep(small_sweep), "runs");
    std::map<std::string, std::string> config_of_group;
    for (const auto& row : table.rows) {
      size_t seeds = 0;
      for (const auto& run : runs) seeds += run.group == row.run;
      CHECK(seeds == 3);
      const SweepRun& run = row_run(runs, row);
      ExperimentConfig config = load_experiment(run.experiment, run.overrides, overlay);
      CHECK(config.tags == std::vector<std::string>{"small"});
      CHECK(config.model.add_pooler);
      const std::string encoder = run.group == "pretrained_emd"     ? "deberta_small"
                                  : run.group == "pretrained_noemd" ? "deberta_small_noemd"
                                                                    : "bert_small";
      CHECK(config.model.pretrained == "runs/pretrain-small/" + encoder + "/model");
      config.name.clear();
      config.output_dir.clear();
      config.seed = 0;
      config_of_group[run.group] = resolved_yaml(config);
    }
    std::set<std::string> distinct;
    for (const auto& [group, config] : config_of_group) distinct.insert(config);
    CHECK(distinct.size() == config_of_group.size());
  }
}
