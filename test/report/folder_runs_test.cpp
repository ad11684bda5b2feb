// A report of a folder's runs without a table file: rows by run group over
// seeds, columns from the tasks the finished runs report, numbers worked out
// by hand.
#include "report/folder_runs.h"

#include <fstream>

#include <fmt/format.h>

#include "core/user_error.h"
#include "report/report_results.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A finished run's summary.json with these dev scores (SST and STS).
std::string summary(double sst, double sts, double overall) {
  return fmt::format(R"({{"status": "finished", "best": {{"overall": {},
    "dev": {{"sts": {{"metric": "pearson", "value": {}}}, "sst": {{"metric": "accuracy", "value": {}}}}}}}}})",
                     overall, sts, sst);
}

}  // namespace

TEST_CASE("run_group: a run's name without -seed<N>", "[folder_runs]") {
  CHECK(mtbert::run_group("baseline-lr2e-05-seed3") == "baseline-lr2e-05");
  CHECK(mtbert::run_group("baseline-seed12") == "baseline");
  CHECK(mtbert::run_group("baseline") == "baseline");
  CHECK(mtbert::run_group("seedless-seedx") == "seedless-seedx");
}

TEST_CASE("a folder's runs: a row per group over its seeds, a column per task", "[folder_runs]") {
  mtbert::test::TempDir dir;
  write(dir / "mean-seed1" / "summary.json", summary(0.40, 0.20, 0.50));
  write(dir / "mean-seed2" / "summary.json", summary(0.50, 0.40, 0.60));
  write(dir / "cls-seed1" / "summary.json", summary(0.30, 0.10, 0.40));
  write(dir / "cls-seed2" / "config.resolved.yaml", "name: \"cls-seed2\"\n");  // started, not finished
  write(dir / "pretrained" / "config.resolved.yaml", "name: \"p\"\ncorpus:\n  train: \"c.txt\"\n");
  fs::create_directories(dir / "not-a-run");
  write(dir / "notes.txt", "a file beside the runs\n");

  const mtbert::FolderRuns found = mtbert::folder_runs(dir.path());
  REQUIRE(found.runs.size() == 4);  // no pretraining run, no empty folder
  CHECK(found.runs[0].name == "cls-seed1");
  CHECK(found.runs[0].group == "cls");
  REQUIRE(found.table.rows.size() == 2);
  CHECK(found.table.rows[0].label == "cls");
  CHECK(found.table.rows[1].run == "mean");
  REQUIRE(found.table.columns.size() == 3);  // overall, then the built-in tasks in their order
  CHECK(found.table.columns[0].key == "overall");
  CHECK(found.table.columns[1].key == "sst");
  CHECK(found.table.columns[2].key == "sts");

  const mtbert::ReportResult result = mtbert::collect_report(found.table, found.runs, dir.path(), fs::path());
  REQUIRE(result.rows.size() == 2);
  const auto& cls = result.rows[0];
  CHECK(cls.runs.size() == 2);
  CHECK(cls.finished == 1);
  CHECK_THAT(cls.cells.at("sst").mean, WithinAbs(0.30, 1e-12));
  const auto& mean = result.rows[1];
  CHECK(mean.cells.at("sst").n == 2);
  CHECK_THAT(mean.cells.at("sst").mean, WithinAbs(0.45, 1e-12));
  CHECK_THAT(mean.cells.at("sst").stddev, WithinAbs(0.0707106781186548, 1e-12));  // sqrt(0.005)
  CHECK_THAT(mean.cells.at("overall").mean, WithinAbs(0.55, 1e-12));
}

TEST_CASE("a folder without run folders is one error naming it", "[folder_runs]") {
  mtbert::test::TempDir dir;
  fs::create_directories(dir / "empty");
  CHECK_THROWS_WITH(mtbert::folder_runs(dir.path()), ContainsSubstring("holds no run folders"));
}
