// Collecting a table from run folders made by hand: which runs each row
// finds, where they stand, and mean and sample standard deviation worked out
// by hand.
#include "report/report_results.h"

#include <fstream>

#include <fmt/format.h>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
namespace fs = std::filesystem;
using mtbert::RunStatus;

namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// A finished run's summary.json with these dev scores.
std::string summary(const char* status, double sst, double para, double sts, double overall, const char* tags = "[]") {
  return fmt::format(R"({{"status": "{}", "tags": {}, "test": {{}}, "best": {{"step": 10, "overall": {},
    "dev": {{"sst": {{"metric": "accuracy", "value": {}}}, "para": {{"metric": "accuracy", "value": {}}},
             "sts": {{"metric": "pearson", "value": {}}}}}}}}})",
                     status, tags, overall, sst, para, sts);
}

struct Fixture {
  mtbert::test::TempDir dir;
  mtbert::SweepSpec sweep;
  mtbert::ReportTable table;

  Fixture() {
    sweep = mtbert::load_sweep(dir.write("s.yaml", "experiments: [a.yaml, b.yaml]\nseeds: [1, 2, 3]\n"));
    const fs::path runs = dir / "runs";
    write(runs / "a-seed1" / "summary.json", summary("finished", 0.40, 0.70, 0.30, 0.55, "[\"smoke\"]"));
    write(runs / "a-seed2" / "summary.json", summary("finished", 0.50, 0.80, 0.50, 0.65));
    write(runs / "a-seed3" / "summary.json", summary("early_stopped", 0.45, 0.75, 0.40, 0.60));
    write(runs / "b-seed1" / "summary.json", summary("finished", 0.30, 0.60, 0.20, 0.50));
    write(runs / "b-seed2" / "summary.json", R"({"status": "interrupted", "tags": ["smoke"]})");
    fs::create_directories(runs / "b-seed2" / "checkpoints" / "last");
    table = mtbert::load_report_table(dir.write("t.yaml",
                                                "sweep: s.yaml\n"
                                                "columns: {sst: SST, para: Quora, sts: STS, overall: Overall}\n"
                                                "rows:\n"
                                                "  - {label: A, run: a, paper: {sst: 0.5, overall: 0.7}}\n"
                                                "  - {label: B, run: b}\n"
                                                "  - {label: A test, run: a, split: test}\n"
                                                "  - {label: A seed 2, run: a-seed2}\n"));
  }
};

}  // namespace

TEST_CASE("a row gathers its seeds: mean and sample standard deviation", "[report_results]") {
  Fixture f;
  const auto r = mtbert::collect_report(f.table, f.sweep, f.dir / "runs");
  REQUIRE(r.rows.size() == 4);
  const auto& a = r.rows[0];
  REQUIRE(a.runs.size() == 3);
  CHECK(a.runs[0].name == "a-seed1");
  CHECK(a.runs[2].status == RunStatus::early_stopped);
  CHECK(a.finished == 3);
  // sst 0.40, 0.50, 0.45: mean 0.45, sample variance (0.0025 + 0.0025 + 0) / 2.
  CHECK(a.cells.at("sst").n == 3);
  CHECK_THAT(a.cells.at("sst").mean, WithinAbs(0.45, 1e-12));
  CHECK_THAT(a.cells.at("sst").stddev, WithinAbs(0.05, 1e-12));
  CHECK_THAT(a.cells.at("sts").mean, WithinAbs(0.40, 1e-12));
  CHECK_THAT(a.cells.at("sts").stddev, WithinAbs(0.10, 1e-12));
  CHECK_THAT(a.cells.at("overall").mean, WithinAbs(0.60, 1e-12));
  CHECK(a.cells.at("sst").paper == 0.5);
  CHECK_FALSE(a.cells.at("para").paper.has_value());
  CHECK(a.tags == std::vector<std::string>{"smoke"});
}

TEST_CASE("unfinished and missing runs are counted out, and named", "[report_results]") {
  Fixture f;
  const auto r = mtbert::collect_report(f.table, f.sweep, f.dir / "runs");
  const auto& b = r.rows[1];
  REQUIRE(b.runs.size() == 3);
  CHECK(b.runs[1].status == RunStatus::interrupted);
  CHECK(b.runs[2].status == RunStatus::missing);
  CHECK(b.finished == 1);
  CHECK(b.cells.at("para").n == 1);
  CHECK_THAT(b.cells.at("para").mean, WithinAbs(0.60, 1e-12));
  CHECK(b.cells.at("para").stddev == 0);
  CHECK(r.tags == std::vector<std::string>{"smoke"});
}

TEST_CASE("a test row of unlabeled test files has no numbers but says why", "[report_results]") {
  Fixture f;
  const auto r = mtbert::collect_report(f.table, f.sweep, f.dir / "runs");
  for (const auto& [key, cell] : r.rows[2].cells) {
    CHECK(cell.n == 0);
    CHECK(cell.not_evaluated);
  }
  // One run by its full name.
  REQUIRE(r.rows[3].runs.size() == 1);
  CHECK_THAT(r.rows[3].cells.at("sst").mean, WithinAbs(0.50, 1e-12));
}

TEST_CASE("a column naming no task of the finished runs is an error", "[report_results]") {
  Fixture f;
  f.table.columns[1].key = "quora";
  // Not while a row's runs are still training: the column may be theirs.
  CHECK_NOTHROW(mtbert::collect_report(f.table, f.sweep, f.dir / "runs"));
  f.table.rows.erase(f.table.rows.begin() + 1);  // B, whose seed 2 is interrupted
  CHECK_THROWS_WITH(mtbert::collect_report(f.table, f.sweep, f.dir / "runs"),
                    ContainsSubstring("t.yaml: columns.quora: none of the runs reports a task \"quora\"") &&
                        ContainsSubstring("(the columns may name para, sst, sts, overall)"));
}

TEST_CASE("a row naming no run of the sweep is an error at its line", "[report_results]") {
  Fixture f;
  f.table.rows[1].run = "bb";
  f.table.rows[1].run_origin = {"t.yaml", 5};
  CHECK_THROWS_WITH(mtbert::collect_report(f.table, f.sweep, f.dir / "runs"),
                    ContainsSubstring("t.yaml:5: rows[1].run: no run \"bb\" in sweep") &&
                        ContainsSubstring("(did you mean \"b\"?) (its runs: a, a-seed1, a-seed2, a-seed3, b, b-seed1"));
}
