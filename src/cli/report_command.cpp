// mtbert report: a paper's table with its numbers beside ours, from the
// summary.json files of a sweep's runs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <filesystem>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "core/atomic_file.h"
#include "report/erased_differences.h"
#include "report/report_format.h"
#include "report/report_results.h"
#include "report/report_table.h"
#include "report/row_differences.h"
#include "sweep/sweep_spec.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string table;
  std::string runs;
  std::string sweep;
  std::string format = "md";
  std::string output;
  std::string against;
  bool against_given = false;  // --against "" turns the table's comparison off
  int64_t bootstrap_samples = 2000;
};

void run_report(const ReportArgs& args) {
  const ReportFormat format = report_format_from_name(args.format);
  const ReportTable table = load_report_table(args.table);
  const SweepSpec sweep = load_sweep(args.sweep.empty() ? table.sweep : fs::path(args.sweep));
  if (!args.output.empty()) check_output_spares_inputs("--output", args.output, {args.table, sweep.source});
  const fs::path root = args.runs.empty() ? fs::path(sweep.output_root) : fs::path(args.runs);
  ReportResult result = collect_report(table, sweep, root);
  const std::string against = args.against_given ? args.against : table.against;
  if (!against.empty()) {
    BootstrapOptions options;
    options.samples = args.bootstrap_samples;
    compare_rows(result, against, options);
  }
  if (report_has_smoke_runs(result))
    spdlog::warn("{}: these runs are tagged smoke: their numbers prove the pipeline, not the papers' results",
                 root.string());
  for (const auto& erased : erased_differences(result, sweep))
    spdlog::warn("{}: the rows' experiments set {} to {}, but every run trained {} = {}: an overlay or override "
                 "replaced it, so the rows cannot show that difference",
                 args.table, erased.key, fmt::join(erased.intended, " / "), erased.key, erased.trained);
  const std::string text = format_report(result, format);
  if (args.output.empty()) {
    fmt::print("{}", text);
    return;
  }
  write_text_atomically(args.output, text);
  spdlog::info("wrote {}", args.output);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "A paper's table with its numbers beside ours, from a sweep's runs");
  cmd->add_option("table", args->table, "TABLE.yaml (experiments/tables/)")->required();
  cmd->add_option("--sweep", args->sweep,
                  "The sweep whose runs fill the table (default: the table's sweep:), e.g. the same rows with more "
                  "seeds: experiments/sweeps/small/");
  cmd->add_option("--runs", args->runs, "Folder of the run folders (default: the sweep's output_root)")
      ->check(folder_or_absent());
  cmd->add_option("--format", args->format, "md (GitHub Markdown), csv or latex (booktabs)")
      ->check(CLI::IsMember({"md", "csv", "latex"}));
  cmd->add_option("--output,-o", args->output, "Write the table to this file (default: standard output)");
  auto* against = cmd->add_option("--against", args->against,
                                  "Compare every row with the row of this label: differences on dev with 95% "
                                  "paired-bootstrap intervals over dev examples (default: the table's `against:`; "
                                  "\"\": none)");
  cmd->add_option("--bootstrap-samples", args->bootstrap_samples, "Bootstrap samples of the intervals")
      ->check(whole_number(100, 1000000));
  cmd->callback([args, against] {
    args->against_given = against->count() > 0;
    run_report(*args);
  });
}

}  // namespace mtbert::cli
