// The three formats of a report, from a result put together by hand, against
// the text written out by hand.
#include "report/report_format.h"

#include "core/user_error.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using mtbert::RunStatus;

namespace {

mtbert::ReportCell cell(std::optional<double> paper, int64_t n, double mean = 0, double stddev = 0,
                        bool not_evaluated = false) {
  mtbert::ReportCell c;
  c.paper = paper;
  c.n = n;
  c.mean = mean;
  c.stddev = stddev;
  c.not_evaluated = not_evaluated;
  return c;
}

struct Fixture {
  mtbert::ReportTable table;
  mtbert::ReportResult result;

  explicit Fixture(bool smoke = true) {
    const std::vector<std::string> tags = smoke ? std::vector<std::string>{"smoke"} : std::vector<std::string>{};
    table.title = "T";
    table.sweep = "table-sweep.yaml";  // the report names the sweep it read (result.sweep)
    table.columns = {{"sst", "SST"}, {"overall", "Overall"}};
    table.rows = {{"A", "a", {}, "dev", {}}, {"B", "b", {}, "dev", {}}, {"C", "a", {}, "test", {}},
                  {"D", "d", {}, "dev", {}}};
    result.table = &table;
    result.runs_root = "runs/t";
    result.sweep = "s.yaml";
    result.tags = tags;
    mtbert::ReportRowResult a;
    a.row = &table.rows[0];
    a.runs = {{"a-seed1", "", RunStatus::finished}, {"a-seed2", "", RunStatus::finished},
              {"a-seed3", "", RunStatus::early_stopped}};
    a.finished = 3;
    a.cells = {{"sst", cell(0.5, 3, 0.45, 0.05)}, {"overall", cell(0.7, 3, 0.6, 0.05)}};
    a.tags = tags;
    mtbert::ReportRowResult b;
    b.row = &table.rows[1];
    b.runs = {{"b-seed1", "", RunStatus::finished}, {"b-seed2", "", RunStatus::interrupted},
              {"b-seed3", "", RunStatus::missing}};
    b.finished = 1;
    b.cells = {{"sst", cell(std::nullopt, 1, 0.3)}, {"overall", cell(std::nullopt, 1, 0.5)}};
    mtbert::ReportRowResult c;
    c.row = &table.rows[2];
    c.runs = {{"a-seed1", "", RunStatus::finished}};
    c.finished = 1;
    c.cells = {{"sst", cell(0.499, 0, 0, 0, true)}, {"overall", cell(std::nullopt, 0, 0, 0, true)}};
    mtbert::ReportRowResult d;
    d.row = &table.rows[3];
    d.runs = {{"d", "", RunStatus::missing}};
    d.cells = {{"sst", cell(std::nullopt, 0)}, {"overall", cell(std::nullopt, 0)}};
    result.rows = {a, b, c, d};
  }
};

}  // namespace

TEST_CASE("markdown: paper, ours and the difference per column, a smoke banner, notes", "[report_format]") {
  Fixture f;
  CHECK(mtbert::format_report(f.result, mtbert::ReportFormat::markdown) ==
        "## T\n"
        "\n"
        "> **SMOKE RUNS, NOT THE PAPERS' SETTING.** These runs are tagged `smoke`: a tiny model trained for a few\n"
        "> steps on small subsets of the data, to prove that the pipeline runs end to end. Their numbers say\n"
        "> nothing about the methods; do not compare them with the paper's.\n"
        "\n"
        "Ours: the runs in `runs/t` (sweep `s.yaml`), on each row's split (dev: the best dev evaluation).\n"
        "Per column: the paper's number, ours (mean ± sample standard deviation over the n finished runs) and ours\n"
        "minus the paper's. Run tags: smoke.\n"
        "\n"
        "| Model | Split | n | SST paper | SST ours | SST Δ | Overall paper | Overall ours | Overall Δ |\n"
        "|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n"
        "| A | dev | 3 | 0.500 | 0.450 ± 0.050 | -0.050 | 0.700 | 0.600 ± 0.050 | -0.100 |\n"
        "| B | dev | 1/3 |  | 0.300 |  |  | 0.500 |  |\n"
        "| C | test | 1 | 0.499 | n/a (unlabeled) |  |  | n/a (unlabeled) |  |\n"
        "| D | dev | 0/1 |  | missing |  |  | missing |  |\n"
        "\n"
        "Rows with missing or unfinished runs:\n"
        "\n"
        "- B: b-seed2 interrupted (mtbert sweep resumes it), b-seed3 missing\n"
        "- D: d missing\n");
}

TEST_CASE("markdown without smoke runs or test rows has no banner and no split column", "[report_format]") {
  Fixture f(false);
  f.result.rows.erase(f.result.rows.begin() + 1, f.result.rows.end());
  CHECK(mtbert::format_report(f.result, mtbert::ReportFormat::markdown) ==
        "## T\n"
        "\n"
        "Ours: the runs in `runs/t` (sweep `s.yaml`), best dev scores.\n"
        "Per column: the paper's number, ours (mean ± sample standard deviation over the n finished runs) and ours\n"
        "minus the paper's.\n"
        "\n"
        "| Model | n | SST paper | SST ours | SST Δ | Overall paper | Overall ours | Overall Δ |\n"
        "|:--|--:|--:|--:|--:|--:|--:|--:|\n"
        "| A | 3 | 0.500 | 0.450 ± 0.050 | -0.050 | 0.700 | 0.600 ± 0.050 | -0.100 |\n");
}

TEST_CASE("csv: one line per row, numbers to six digits, tags and notes", "[report_format]") {
  Fixture f;
  CHECK(mtbert::format_report(f.result, mtbert::ReportFormat::csv) ==
        "row,run,split,runs,finished,sst_paper,sst_ours,sst_std,sst_n,sst_diff,"
        "overall_paper,overall_ours,overall_std,overall_n,overall_diff,tags,notes\n"
        "A,a,dev,3,3,0.5,0.45,0.05,3,-0.05,0.7,0.6,0.05,3,-0.1,smoke,\n"
        "B,b,dev,3,1,,0.3,,1,,,0.5,,1,,,\"b-seed2 interrupted (mtbert sweep resumes it), b-seed3 missing\"\n"
        "C,a,test,1,1,0.499,,,0,,,,,0,,,sst: n/a (unlabeled); overall: n/a (unlabeled)\n"
        "D,d,dev,1,0,,,,0,,,,,0,,,sst: missing; overall: missing; d missing\n");
}

TEST_CASE("latex: booktabs rules, a column group per metric, the smoke warning in the caption", "[report_format]") {
  Fixture f;
  f.table.title = "Table 1 & more_stuff";
  CHECK(mtbert::format_report(f.result, mtbert::ReportFormat::latex) ==
        "% Table 1 & more_stuff (mtbert report). Needs \\usepackage{booktabs}.\n"
        "% SMOKE RUNS, NOT THE PAPERS' SETTING: these numbers prove the pipeline, not the methods.\n"
        "\\begin{table}[ht]\n"
        "  \\centering\n"
        "  \\small\n"
        "  \\begin{tabular}{llrrrrrrr}\n"
        "    \\toprule\n"
        "    & & & \\multicolumn{3}{c}{SST} & \\multicolumn{3}{c}{Overall} \\\\\n"
        "    \\cmidrule(lr){4-6} \\cmidrule(lr){7-9}\n"
        "    Model & Split & $n$ & Paper & Ours & $\\Delta$ & Paper & Ours & $\\Delta$ \\\\\n"
        "    \\midrule\n"
        "    A & dev & 3 & 0.500 & 0.450 $\\pm$ 0.050 & $-$0.050 & 0.700 & 0.600 $\\pm$ 0.050 & $-$0.100 \\\\\n"
        "    B & dev & 1/3 &  & 0.300 &  &  & 0.500 &  \\\\\n"
        "    C & test & 1 & 0.499 & n/a (unlabeled) &  &  & n/a (unlabeled) &  \\\\\n"
        "    D & dev & 0/1 &  & missing &  &  & missing &  \\\\\n"
        "    \\bottomrule\n"
        "  \\end{tabular}\n"
        "  \\caption{\\textbf{Smoke runs, not the papers' setting: the numbers prove the pipeline only.} "
        "Table 1 \\& more\\_stuff. Ours: the runs in \\texttt{runs/t} (sweep \\texttt{s.yaml}), on each row's split "
        "(dev: the best dev evaluation). Ours is the mean $\\pm$ sample standard deviation over the $n$ finished "
        "runs. Missing or unfinished: B: b-seed2 interrupted (mtbert sweep resumes it), b-seed3 missing; D: d "
        "missing.}\n"
        "\\end{table}\n");
}

TEST_CASE("a table without paper numbers shows ours alone, in markdown and latex", "[report_format]") {
  Fixture f(false);
  f.result.rows.erase(f.result.rows.begin() + 2, f.result.rows.end());
  for (auto& row : f.result.rows)
    for (auto& [key, cell] : row.cells) cell.paper.reset();
  CHECK(mtbert::format_report(f.result, mtbert::ReportFormat::markdown) ==
        "## T\n"
        "\n"
        "Ours: the runs in `runs/t` (sweep `s.yaml`), best dev scores.\n"
        "Per column: ours (mean ± sample standard deviation over the n finished runs); no paper numbers.\n"
        "\n"
        "| Model | n | SST | Overall |\n"
        "|:--|--:|--:|--:|\n"
        "| A | 3 | 0.450 ± 0.050 | 0.600 ± 0.050 |\n"
        "| B | 1/3 | 0.300 | 0.500 |\n"
        "\n"
        "Rows with missing or unfinished runs:\n"
        "\n"
        "- B: b-seed2 interrupted (mtbert sweep resumes it), b-seed3 missing\n");
  const std::string latex = mtbert::format_report(f.result, mtbert::ReportFormat::latex);
  CHECK_THAT(latex, ContainsSubstring("  \\begin{tabular}{lrrr}\n"
                                      "    \\toprule\n"
                                      "    Model & $n$ & SST & Overall \\\\\n"
                                      "    \\midrule\n"
                                      "    A & 3 & 0.450 $\\pm$ 0.050 & 0.600 $\\pm$ 0.050 \\\\\n"
                                      "    B & 1/3 & 0.300 & 0.500 \\\\\n"));
}

TEST_CASE("report formats by name", "[report_format]") {
  CHECK(mtbert::report_format_from_name("md") == mtbert::ReportFormat::markdown);
  CHECK(mtbert::report_format_from_name("latex") == mtbert::ReportFormat::latex);
  CHECK_THROWS_WITH(mtbert::report_format_from_name("html"), ContainsSubstring("\"html\" is not one of md, csv, latex"));
  CHECK(mtbert::report_has_smoke_runs(Fixture().result));
  Fixture small(false);
  small.result.tags = {"small"};
  CHECK_FALSE(mtbert::report_has_smoke_runs(small.result));
  CHECK_THAT(mtbert::format_report(small.result, mtbert::ReportFormat::markdown),
             Catch::Matchers::ContainsSubstring("> **Small-scale runs, not the papers' setting.** These runs are tagged `small`"));
  CHECK_THAT(mtbert::format_report(small.result, mtbert::ReportFormat::latex),
             Catch::Matchers::ContainsSubstring("\\textbf{Small-scale runs"));
  CHECK_FALSE(mtbert::report_has_smoke_runs(Fixture(false).result));
}
