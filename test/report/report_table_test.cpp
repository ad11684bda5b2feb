// Table files: what is read, and mistakes as one line naming file, line, key.
#include "report/report_table.h"

#include <algorithm>

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "support/user_error_of.h"
#include "sweep/sweep_expansion.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

std::string error_of(const mtbert::test::TempDir& dir, const std::string& text) {
  return mtbert::test::user_error_of([&] { mtbert::load_report_table(dir.write("t.yaml", text)); });
}

const char* const kHead = "sweep: s.yaml\ncolumns: {sst: SST, overall: Overall}\n";

}  // namespace

TEST_CASE("a table file gives columns, rows and the paper's numbers", "[report_table]") {
  mtbert::test::TempDir dir;
  std::filesystem::create_directories(dir / "tables");
  const auto t = mtbert::load_report_table(dir.write("tables/t.yaml",
                                                     "title: \"Report, Table 2\"\n"
                                                     "sweep: ../sweeps/t.yaml\n"
                                                     "columns: {sst: SST, para: Para, overall: average}\n"
                                                     "rows:\n"
                                                     "  - label: minBERT finetune\n"
                                                     "    run: finetune\n"
                                                     "    paper: {sst: 0.435, para: 0.781, overall: 0.658}\n"
                                                     "  - {label: test, run: abs-seed1, split: test, paper: {sst: null}}\n"));
  CHECK(t.title == "Report, Table 2");
  CHECK(t.sweep == dir / "sweeps" / "t.yaml");
  REQUIRE(t.columns.size() == 3);
  CHECK(t.columns[2].key == "overall");
  CHECK(t.columns[2].label == "average");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].label == "minBERT finetune");
  CHECK(t.rows[0].run == "finetune");
  CHECK(t.rows[0].run_origin.line == 6);
  CHECK(t.rows[0].split == "dev");
  CHECK(t.rows[0].paper == std::map<std::string, double>{{"sst", 0.435}, {"para", 0.781}, {"overall", 0.658}});
  CHECK(t.rows[1].split == "test");
  CHECK(t.rows[1].paper.empty());
}

TEST_CASE("a bad table file is one line naming file, line and key", "[report_table]") {
  mtbert::test::TempDir dir;
  const std::string f = (dir / "t.yaml").string();
  const std::string head = kHead;
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a, run: r, paper: {sts: 0.5}}\n"),
             Equals(f + ":4: rows[0].paper.sts: not one of the table's columns"));
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a, run: r, paper: {sst: high}}\n"),
             Equals(f + ":4: rows[0].paper.sst: expected a number, got 'high'"));
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a, run: r, split: train}\n"),
             ContainsSubstring(":4: rows[0].split: \"train\" is not one of dev, test"));
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a}\n"), ContainsSubstring("rows[0].run: missing"));
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a, run: r, papr: {}}\n"),
             ContainsSubstring(":4: rows[0].papr: unknown key (did you mean \"paper\"?)"));
  CHECK_THAT(error_of(dir, head + "rows: []\n"), ContainsSubstring("rows: expected a list of rows"));
  CHECK_THAT(error_of(dir, "columns: {sst: SST}\nrows: [{label: a, run: r}]\n"), ContainsSubstring("sweep: missing"));
  CHECK_THAT(error_of(dir, "sweep: s.yaml\ncolumns: [sst]\nrows: [{label: a, run: r}]\n"),
             ContainsSubstring(":2: columns: expected a map of column keys"));
  CHECK_THAT(error_of(dir, head + "rows: [{label: a, run: r}]\ncolour: red\n"), ContainsSubstring(":4: colour: unknown key"));
  CHECK_THAT(error_of(dir, "sweep: s.yaml\ncolumns: {}\nrows: [{label: a, run: r}]\n"),
             ContainsSubstring(":2: columns: expected a map of column keys") && ContainsSubstring("got an empty one"));
  CHECK_THAT(error_of(dir, head + "rows:\n  - {label: a, run: r}\n  - {label: a, run: s}\n"),
             Equals(f + ":5: rows[1].label: \"a\" is rows[0]'s label too: give each row its own"));
  CHECK_THAT(error_of(dir, head + "rows: [{label: base, run: r}, {label: b, run: s}]\nagainst: bass\n"),
             Equals(f + ":4: against: no row \"bass\" (did you mean \"base\"?) (the rows: base, b)"));
  CHECK(mtbert::load_report_table(dir.write("ok.yaml", head + "rows: [{label: base, run: r}]\nagainst: base\n")).against ==
        "base");
}

TEST_CASE("the committed tables name runs of their sweeps, with the papers' seed", "[report_table]") {
  const auto tables = mtbert::test::source_dir() / "experiments" / "tables";
  // The PAL table has one row the report does not: Stickland & Murray's parallel PALs.
  const std::vector<std::pair<std::string, size_t>> expected{
      {"deberta_table2.yaml", 6}, {"final_table1.yaml", 5}, {"pal_table1.yaml", 5}};
  for (const auto& [file, rows] : expected) {
    INFO(file);
    const auto table = mtbert::load_report_table(tables / file);
    CHECK(table.rows.size() == rows);
    const auto sweep = mtbert::load_sweep(table.sweep);
    REQUIRE(sweep.seeds.size() == 1);
    CHECK(sweep.seeds[0].value == 11711);
    const auto runs = mtbert::expand_sweep(sweep, sweep.output_root);
    for (const auto& row : table.rows) {
      INFO(row.run);
      CHECK(std::count_if(runs.begin(), runs.end(), [&](const mtbert::SweepRun& r) { return r.group == row.run; }) == 1);
      const bool extra_row = row.run == "finetuned_pal_parallel";
      CHECK(row.paper.size() == (extra_row ? 0 : table.columns.size()));
    }
  }
  CHECK(mtbert::expand_sweep(mtbert::load_sweep(mtbert::test::source_dir() / "experiments" / "sweeps" / "example.yaml"),
                             "r")
            .size() == 24);
}
