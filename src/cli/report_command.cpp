// mtbert report: a paper's table with its numbers beside ours, from the
// summary.json files of a sweep's runs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "core/atomic_file.h"
#include "core/did_you_mean.h"
#include "core/user_error.h"
#include "report/erased_differences.h"
#include "report/folder_runs.h"
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
  bool format_given = false;
  std::vector<std::string> outputs;
  std::string against;
  bool against_given = false;  // --against "" turns the table's comparison off
  std::vector<std::string> also_against;  // STEM=LABEL
  int64_t bootstrap_samples = 2000;
};

// Each --output's format: --format's when given (one output only), else its
// extension's (.md, .csv, .tex; md for any other). A table written in
// several formats is computed once, bootstrap included.
std::vector<std::pair<std::string, ReportFormat>> output_formats(const ReportArgs& args) {
  if (args.format_given && args.outputs.size() > 1)
    throw UserError("--format with several --output: each output's extension (.md, .csv, .tex) names its format");
  std::vector<std::pair<std::string, ReportFormat>> out;
  for (const auto& output : args.outputs) {
    const std::string extension = fs::path(output).extension().string();
    std::string name = args.format;
    if (!args.format_given) name = extension == ".csv" ? "csv" : extension == ".tex" ? "latex" : "md";
    for (const auto& [earlier, format] : out)
      if (fs::path(earlier).lexically_normal() == fs::path(output).lexically_normal())
        throw UserError(fmt::format("--output {}: the same file as --output {}", output, earlier));
    out.emplace_back(output, report_format_from_name(name));
  }
  return out;
}

// One more version of a report's outputs: the same table against another
// reference row, written beside each --output under another stem.
struct ExtraComparison {
  std::string stem;
  std::string against;
};

// --also-against STEM=LABEL, each checked before anything is read: a plain
// file stem, given once, whose files are none of the --output files.
std::vector<ExtraComparison> extra_comparisons(const ReportArgs& args) {
  std::vector<ExtraComparison> out;
  if (!args.also_against.empty() && args.outputs.empty())
    throw UserError("--also-against writes each --output again under another name: give --output (-o) too");
  for (const auto& entry : args.also_against) {
    const auto stem_label = name_and_value(entry);
    if (!stem_label)
      throw UserError(fmt::format("--also-against {}: expected STEM=LABEL, e.g. vs-cosine=\"cosine similarity\"",
                                  entry));
    const auto& [stem, label] = *stem_label;
    if (stem.find('/') != std::string::npos || stem == "." || stem == "..")
      throw UserError(fmt::format("--also-against {}: {} is a file name without folder or extension", entry, stem));
    for (const auto& earlier : out)
      if (earlier.stem == stem) throw UserError(fmt::format("--also-against {}: {} is given twice", entry, stem));
    for (const auto& output : args.outputs)
      if (fs::path(output).stem() == stem)
        throw UserError(fmt::format("--also-against {}: would write over --output {}", entry, output));
    out.push_back({stem, label});
  }
  return out;
}

// `output` with its file stem replaced: out/table.md -> out/vs-x.md.
std::string with_stem(const std::string& output, const std::string& stem) {
  const fs::path path(output);
  return (path.parent_path() / (stem + path.extension().string())).string();
}

// An explicit --runs that is no folder is a mistyped path, not a sweep
// that has not run yet: said at once, with the closest folder beside it.
void check_runs_folder(const std::string& runs) {
  std::error_code ec;
  if (fs::is_directory(runs, ec)) return;
  const fs::path path(runs);
  const fs::path parent = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::vector<std::string> siblings;
  for (const auto& entry : fs::directory_iterator(parent, ec))
    if (entry.is_directory(ec)) siblings.push_back((path.parent_path() / entry.path().filename()).string());
  throw UserError(fmt::format("--runs {}: no such folder{}", runs, did_you_mean_suffix(runs, siblings)));
}

// The table of a report: the table file's, or one made from the run folders
// of --runs alone (report/folder_runs.h); filled in place, since the result
// points into the table.
struct ReportInputs {
  ReportTable table;
  std::optional<SweepSpec> sweep;  // none for --runs alone
  fs::path root;
  ReportResult result;
};

void collect(const ReportArgs& args, ReportInputs& in) {
  if (args.table.empty()) {
    if (args.runs.empty())
      throw UserError("report needs TABLE.yaml, or --runs DIR to tabulate the runs in DIR (rows: runs over seeds)");
    if (!args.sweep.empty()) throw UserError("--sweep names the runs of a table: give TABLE.yaml with it");
    FolderRuns found = folder_runs(args.runs);
    in.table = std::move(found.table);
    in.root = args.runs;
    for (const auto& output : args.outputs) check_output_spares_inputs("--output", output, {});
    in.result = collect_report(in.table, found.runs, in.root, fs::path());
    return;
  }
  in.table = load_report_table(args.table);
  in.sweep = load_sweep(args.sweep.empty() ? in.table.sweep : fs::path(args.sweep));
  for (const auto& output : args.outputs)
    check_output_spares_inputs("--output", output, {args.table, in.sweep->source});
  in.root = args.runs.empty() ? fs::path(in.sweep->output_root) : fs::path(args.runs);
  in.result = collect_report(in.table, *in.sweep, in.root);
}

void run_report(const ReportArgs& args) {
  const auto outputs = output_formats(args);
  const auto extras = extra_comparisons(args);
  if (!args.runs.empty()) check_runs_folder(args.runs);
  ReportInputs in;
  collect(args, in);
  // The result points into in.table, which stays where it is; each
  // comparison fills its own copy, with the same bootstrap seed as a report
  // of that comparison alone. All are made before any warning or file: a
  // reference row that is no row is the one line of its error.
  BootstrapOptions options;
  options.samples = args.bootstrap_samples;
  const auto compared = [&](const std::string& against) {
    ReportResult result = in.result;
    if (!against.empty()) compare_rows(result, against, options);
    return result;
  };
  const ReportResult result = compared(args.against_given ? args.against : in.table.against);
  std::vector<ReportResult> others;
  for (const auto& extra : extras) others.push_back(compared(extra.against));
  if (report_has_smoke_runs(result))
    spdlog::warn("{}: these runs are tagged smoke: their numbers prove the pipeline, not the papers' results",
                 in.root.string());
  if (in.sweep)
    for (const auto& erased : erased_differences(result, *in.sweep))
      spdlog::warn("{}: the rows' experiments set {} to {}, but every run trained {} = {}: an overlay or override "
                   "replaced it, so the rows cannot show that difference",
                   args.table, erased.key, fmt::join(erased.intended, " / "), erased.key, erased.trained);
  if (outputs.empty()) {
    fmt::print("{}", format_report(result, report_format_from_name(args.format)));
    return;
  }
  // Every text is made before the first is written: a table that cannot be
  // formatted leaves no file of it behind.
  std::vector<std::pair<std::string, std::string>> files;  // path, text
  for (const auto& [output, format] : outputs) files.emplace_back(output, format_report(result, format));
  for (size_t i = 0; i < extras.size(); ++i)
    for (const auto& [output, format] : outputs)
      files.emplace_back(with_stem(output, extras[i].stem), format_report(others[i], format));
  for (const auto& [path, text] : files) {
    write_text_atomically(path, text);
    spdlog::info("wrote {}", path);
  }
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "A paper's table with its numbers beside ours, from a sweep's runs; or "
                                           "any folder's runs tabulated (--runs DIR)");
  cmd->add_option("table", args->table,
                  "TABLE.yaml (experiments/tables/); without it, --runs DIR tabulates the runs in DIR");
  cmd->add_option("--sweep", args->sweep,
                  "The sweep whose runs fill the table (default: the table's sweep:), e.g. the same rows with more "
                  "seeds: experiments/sweeps/small/");
  cmd->add_option("--runs", args->runs,
                  "Folder of the run folders (default: the sweep's output_root); without TABLE.yaml: a row per run "
                  "name without -seed<N> (its seeds), a column per task")
      ->check(folder_or_absent());
  auto* format = cmd->add_option("--format", args->format,
                                 "md (GitHub Markdown), csv or latex (booktabs); default: each --output's extension "
                                 "(.md, .csv, .tex), md on standard output")
                     ->check(CLI::IsMember({"md", "csv", "latex"}));
  cmd->add_option("--output,-o", args->outputs,
                  "Write the table to this file (default: standard output); repeat it to write several formats "
                  "from one pass, e.g. -o t.md -o t.csv -o t.tex");
  auto* against = cmd->add_option("--against", args->against,
                                  "Compare every row with the row of this label: differences on dev with 95% "
                                  "paired-bootstrap intervals over dev examples (default: the table's `against:`; "
                                  "\"\": none)");
  cmd->add_option("--also-against", args->also_against,
                  "STEM=LABEL: also write each --output as STEM.<ext> beside it, every row against the row LABEL; "
                  "repeat it for several reference rows, all from one pass over the runs")
      ->allow_extra_args(false);
  cmd->add_option("--bootstrap-samples", args->bootstrap_samples, "Bootstrap samples of the intervals")
      ->check(whole_number(100, 1000000));
  cmd->callback([args, against, format] {
    args->against_given = against->count() > 0;
    args->format_given = format->count() > 0;
    run_report(*args);
  });
}

}  // namespace mtbert::cli
