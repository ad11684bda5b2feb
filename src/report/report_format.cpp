#include "report/report_format.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

constexpr const char* kSmokeTag = "smoke";
constexpr const char* kSmallTag = "small";

bool has_tag(const ReportResult& r, const char* tag) {
  return std::find(r.tags.begin(), r.tags.end(), tag) != r.tags.end();
}

bool any_test_row(const ReportResult& r) {
  return std::any_of(r.rows.begin(), r.rows.end(), [](const ReportRowResult& row) { return row.row->split == "test"; });
}

// A table without any paper number (a study of our own, such as bf16 against
// fp32) shows ours alone: empty paper and difference columns say nothing.
bool any_paper_number(const ReportResult& r) {
  return std::any_of(r.rows.begin(), r.rows.end(), [](const ReportRowResult& row) {
    return std::any_of(row.cells.begin(), row.cells.end(), [](const auto& cell) { return cell.second.paper.has_value(); });
  });
}

// What stands in a cell without a number of ours.
std::string missing_text(const ReportRowResult& row, const ReportCell& cell) {
  if (cell.not_evaluated) return row.row->split == "test" ? "n/a (unlabeled)" : "n/a";
  const bool none_started = std::all_of(row.runs.begin(), row.runs.end(),
                                        [](const RowRun& run) { return run.status == RunStatus::missing; });
  return none_started ? "missing" : "unfinished";
}

std::string status_note(RunStatus status) {
  switch (status) {
    case RunStatus::missing: return "missing";
    case RunStatus::running: return "running";
    case RunStatus::interrupted: return "interrupted (mtbert sweep resumes it)";
    case RunStatus::failed: return "failed before its first checkpoint (see its train.log)";
    case RunStatus::unresumable: return "unresumable (checkpoints/last is gone)";
    case RunStatus::finished:
    case RunStatus::early_stopped: break;
  }
  return run_status_name(status);
}

// "baseline-seed1 missing, baseline-seed2 running", or "" when every run finished.
std::string unfinished_note(const ReportRowResult& row) {
  std::vector<std::string> parts;
  for (const auto& run : row.runs)
    if (!run_is_done(run.status)) parts.push_back(fmt::format("{} {}", run.name, status_note(run.status)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string runs_text(const ReportRowResult& row) {
  const auto total = static_cast<int64_t>(row.runs.size());
  return row.finished == total ? fmt::format("{}", total) : fmt::format("{}/{}", row.finished, total);
}

// The number formats of one output format.
struct Style {
  std::string plus_minus;
  std::string plus;
  std::string minus;
};

// Three decimals, as the papers give them; the sign in the format's own way.
std::string number_text(double value, const Style& style, bool signed_always) {
  const std::string digits = fmt::format("{:.3f}", std::abs(value));
  const bool zero = digits == "0.000";
  if (value < 0 && !zero) return style.minus + digits;
  return (signed_always ? style.plus : "") + digits;
}

std::string ours_text(const ReportRowResult& row, const ReportCell& cell, const Style& style) {
  if (cell.n == 0) return missing_text(row, cell);
  if (cell.n == 1) return number_text(cell.mean, style, false);
  return number_text(cell.mean, style, false) + style.plus_minus + fmt::format("{:.3f}", cell.stddev);
}

std::string difference_text(const ReportCell& cell, const Style& style) {
  if (cell.n == 0 || !cell.paper) return "";
  return number_text(cell.mean - *cell.paper, style, true);
}

std::string paper_text(const ReportCell& cell, const Style& style) {
  return cell.paper ? number_text(*cell.paper, style, false) : "";
}

// "+0.012 [-0.004, +0.027]", with `mark` appended when the interval holds 0.
std::string comparison_text(const ReportRowResult& row, const std::string& column, const Style& style,
                            const std::string& mark) {
  const auto it = row.against.find(column);
  if (it == row.against.end()) return "";
  const BootstrapDifference& d = it->second;
  return fmt::format("{} [{}, {}]{}", number_text(d.estimate, style, true), number_text(d.low, style, true),
                     number_text(d.high, style, true), d.contains_zero() ? mark : "");
}

// What a row of the differences holds besides numbers.
std::string comparison_note(const ReportResult& r, const ReportRowResult& row) {
  if (row.row->label == r.comparison->against) return "reference";
  return row.not_compared;
}

std::string comparison_description(const ReportResult& r, const std::string& mark) {
  const ReportComparison& c = *r.comparison;
  return fmt::format("Each row's dev score minus the reference row's, with a {:g}% interval from a paired bootstrap "
                     "over dev examples ({} samples; each sample scores every finished run of both rows on the same "
                     "examples, averaged over a row's runs); {} marks an interval that contains 0",
                     100 * c.options.confidence, c.options.samples, mark);
}

// `code` formats a path.
std::string ours_description(const ReportResult& r, std::string (*code)(const std::string&)) {
  return fmt::format("Ours: the runs in {}{}, {}", code(r.runs_root.string()),
                     r.sweep.empty() ? "" : fmt::format(" (sweep {})", code(r.sweep.string())),
                     any_test_row(r) ? "on each row's split (dev: the best dev evaluation)" : "best dev scores");
}

// ---------------------------------------------------------------------------
// Markdown

std::string md_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || c == '*' || c == '_' || c == '`' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string md_code(const std::string& text) { return "`" + text + "`"; }

std::string markdown(const ReportResult& r) {
  const Style style{" ± ", "+", "-"};
  const bool split_column = any_test_row(r);
  const bool paper = any_paper_number(r);
  std::string s = fmt::format("## {}\n\n", md_escape(r.table->title));
  if (report_has_smoke_runs(r))
    s += "> **SMOKE RUNS, NOT THE PAPERS' SETTING.** These runs are tagged `smoke`: a tiny model trained for a few\n"
         "> steps on small subsets of the data, to prove that the pipeline runs end to end. Their numbers say\n"
         "> nothing about the methods; do not compare them with the paper's.\n\n";
  else if (has_tag(r, kSmallTag))
    s += "> **Small-scale runs, not the papers' setting.** These runs are tagged `small` (experiments/small.yaml):\n"
         "> a 4-layer, 256-wide encoder pretrained on about 4.5M tokens, fine-tuned on shares of the training sets.\n"
         "> They test whether a method moves the scores the way its report says; their levels are not the paper's.\n\n";
  s += ours_description(r, md_code) + ".\n";
  s += paper ? "Per column: the paper's number, ours (mean ± sample standard deviation over the n finished runs) and ours\n"
               "minus the paper's."
             : "Per column: ours (mean ± sample standard deviation over the n finished runs); no paper numbers.";
  if (!r.tags.empty()) s += fmt::format(" Run tags: {}.", md_escape(fmt::format("{}", fmt::join(r.tags, ", "))));
  s += "\n\n| Model |";
  std::string rule = "\n|:--|";
  if (split_column) {
    s += " Split |";
    rule += ":--|";
  }
  s += " n |";
  rule += "--:|";
  for (const auto& column : r.table->columns) {
    const std::string label = md_escape(column.label);
    s += paper ? fmt::format(" {0} paper | {0} ours | {0} Δ |", label) : fmt::format(" {} |", label);
    rule += paper ? "--:|--:|--:|" : "--:|";
  }
  s += rule + "\n";
  for (const auto& row : r.rows) {
    s += fmt::format("| {} |", md_escape(row.row->label));
    if (split_column) s += fmt::format(" {} |", row.row->split);
    s += fmt::format(" {} |", runs_text(row));
    for (const auto& column : r.table->columns) {
      const ReportCell& cell = row.cells.at(column.key);
      s += paper ? fmt::format(" {} | {} | {} |", paper_text(cell, style), ours_text(row, cell, style),
                               difference_text(cell, style))
                 : fmt::format(" {} |", ours_text(row, cell, style));
    }
    s += "\n";
  }
  if (r.comparison) {
    s += fmt::format("\n### Against {}\n\n{}.\n\n| Model |", md_escape(r.comparison->against),
                     md_escape(comparison_description(r, "~")));
    std::string comparison_rule = "\n|:--|";
    for (const auto& column : r.table->columns) {
      s += fmt::format(" {} |", md_escape(column.label));
      comparison_rule += "--:|";
    }
    s += comparison_rule + "\n";
    for (const auto& row : r.rows) {
      s += fmt::format("| {} |", md_escape(row.row->label));
      const std::string note = comparison_note(r, row);
      for (const auto& column : r.table->columns)
        s += fmt::format(" {} |", note.empty() ? md_escape(comparison_text(row, column.key, style, " ~")) : note);
      s += "\n";
    }
  }
  std::string notes;
  for (const auto& row : r.rows)
    if (const std::string note = unfinished_note(row); !note.empty())
      notes += fmt::format("- {}: {}\n", md_escape(row.row->label), md_escape(note));
  if (!notes.empty()) s += "\nRows with missing or unfinished runs:\n\n" + notes;
  return s;
}

// ---------------------------------------------------------------------------
// CSV (RFC 4180)

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Six significant digits: more than any metric here means, without the
// binary noise of differences (0.45 - 0.5 = -0.04999999999999999).
std::string csv_number(double value) { return fmt::format("{:.6g}", value); }

std::string csv(const ReportResult& r) {
  std::vector<std::string> header{"row", "run", "split", "runs", "finished"};
  for (const auto& column : r.table->columns)
    for (const char* part : {"paper", "ours", "std", "n", "diff"}) header.push_back(column.key + "_" + part);
  if (r.comparison) {
    header.push_back("against");
    for (const auto& column : r.table->columns)
      for (const char* part : {"vs_against", "vs_against_low", "vs_against_high"})
        header.push_back(column.key + "_" + part);
  }
  header.push_back("tags");
  header.push_back("notes");
  std::string s = fmt::format("{}\n", fmt::join(header, ","));
  for (const auto& row : r.rows) {
    std::vector<std::string> fields{csv_field(row.row->label), csv_field(row.row->run), row.row->split,
                                    fmt::format("{}", row.runs.size()), fmt::format("{}", row.finished)};
    std::vector<std::string> notes;
    for (const auto& column : r.table->columns) {
      const ReportCell& cell = row.cells.at(column.key);
      fields.push_back(cell.paper ? csv_number(*cell.paper) : "");
      fields.push_back(cell.n > 0 ? csv_number(cell.mean) : "");
      fields.push_back(cell.n > 1 ? csv_number(cell.stddev) : "");
      fields.push_back(fmt::format("{}", cell.n));
      fields.push_back(cell.n > 0 && cell.paper ? csv_number(cell.mean - *cell.paper) : "");
      if (cell.n == 0) notes.push_back(fmt::format("{}: {}", column.key, missing_text(row, cell)));
    }
    if (r.comparison) {
      fields.push_back(csv_field(r.comparison->against));
      for (const auto& column : r.table->columns) {
        const auto it = row.against.find(column.key);
        if (it == row.against.end()) {
          fields.insert(fields.end(), {"", "", ""});
        } else {
          fields.push_back(csv_number(it->second.estimate));
          fields.push_back(csv_number(it->second.low));
          fields.push_back(csv_number(it->second.high));
        }
      }
    }
    fields.push_back(csv_field(fmt::format("{}", fmt::join(row.tags, " "))));
    if (const std::string note = unfinished_note(row); !note.empty()) notes.push_back(note);
    fields.push_back(csv_field(fmt::format("{}", fmt::join(notes, "; "))));
    s += fmt::format("{}\n", fmt::join(fields, ","));
  }
  return s;
}

// ---------------------------------------------------------------------------
// LaTeX (booktabs)

std::string tex_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += '\\'; out += c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string tex_code(const std::string& text) { return "\\texttt{" + tex_escape(text) + "}"; }

std::string latex(const ReportResult& r) {
  const Style style{" $\\pm$ ", "$+$", "$-$"};
  const bool smoke = report_has_smoke_runs(r);
  const bool split_column = any_test_row(r);
  const bool paper = any_paper_number(r);
  const size_t per_column = paper ? 3 : 1;
  const size_t first = split_column ? 4 : 3;  // the first column of numbers (1-based)
  std::string s = fmt::format("% {} (mtbert report). Needs \\usepackage{{booktabs}}.\n", r.table->title);
  if (smoke) s += "% SMOKE RUNS, NOT THE PAPERS' SETTING: these numbers prove the pipeline, not the methods.\n";
  else if (has_tag(r, kSmallTag)) s += "% Small-scale runs (experiments/small.yaml), not the papers' setting.\n";
  s += "\\begin{table}[ht]\n  \\centering\n  \\small\n";
  std::string spec = split_column ? "llr" : "lr";
  for (size_t i = 0; i < r.table->columns.size(); ++i) spec += std::string(per_column, 'r');
  s += fmt::format("  \\begin{{tabular}}{{{}}}\n    \\toprule\n    ", spec);
  if (paper) {  // a group of three columns under each label
    s += split_column ? "& & & " : "& & ";  // over Model, (Split,) n
    std::vector<std::string> groups, rules;
    for (size_t i = 0; i < r.table->columns.size(); ++i) {
      groups.push_back(fmt::format("\\multicolumn{{3}}{{c}}{{{}}}", tex_escape(r.table->columns[i].label)));
      rules.push_back(fmt::format("\\cmidrule(lr){{{}-{}}}", first + 3 * i, first + 3 * i + 2));
    }
    s += fmt::format("{} \\\\\n    {}\n    ", fmt::join(groups, " & "), fmt::join(rules, " "));
  }
  s += fmt::format("Model & {}$n$", split_column ? "Split & " : "");
  for (const auto& column : r.table->columns)
    s += paper ? std::string(" & Paper & Ours & $\\Delta$") : " & " + tex_escape(column.label);
  s += " \\\\\n    \\midrule\n";
  for (const auto& row : r.rows) {
    s += "    " + tex_escape(row.row->label);
    if (split_column) s += " & " + row.row->split;
    s += " & " + runs_text(row);
    for (const auto& column : r.table->columns) {
      const ReportCell& cell = row.cells.at(column.key);
      const std::string ours = cell.n > 0 ? ours_text(row, cell, style) : tex_escape(missing_text(row, cell));
      s += paper ? fmt::format(" & {} & {} & {}", paper_text(cell, style), ours, difference_text(cell, style))
                 : " & " + ours;
    }
    s += " \\\\\n";
  }
  s += "    \\bottomrule\n  \\end{tabular}\n";
  std::string caption = tex_escape(r.table->title) + ". " + ours_description(r, tex_code) +
                        ". Ours is the mean $\\pm$ sample standard deviation over the $n$ finished runs.";
  if (smoke) caption = "\\textbf{Smoke runs, not the papers' setting: the numbers prove the pipeline only.} " + caption;
  else if (has_tag(r, kSmallTag))
    caption = "\\textbf{Small-scale runs (a 4-layer, 256-wide pretrained encoder), not the papers' setting.} " + caption;
  std::vector<std::string> notes;
  for (const auto& row : r.rows)
    if (const std::string note = unfinished_note(row); !note.empty())
      notes.push_back(tex_escape(row.row->label + ": " + note));
  if (!notes.empty()) caption += fmt::format(" Missing or unfinished: {}.", fmt::join(notes, "; "));
  s += fmt::format("  \\caption{{{}}}\n\\end{{table}}\n", caption);
  if (r.comparison) {
    s += fmt::format("\\begin{{table}}[ht]\n  \\centering\n  \\small\n  \\begin{{tabular}}{{l{}}}\n    \\toprule\n    Model",
                     std::string(r.table->columns.size(), 'r'));
    for (const auto& column : r.table->columns) s += " & " + tex_escape(column.label);
    s += " \\\\\n    \\midrule\n";
    for (const auto& row : r.rows) {
      s += "    " + tex_escape(row.row->label);
      const std::string note = comparison_note(r, row);
      for (const auto& column : r.table->columns)
        s += " & " + (note.empty() ? comparison_text(row, column.key, style, "$^\\sim$") : tex_escape(note));
      s += " \\\\\n";
    }
    s += fmt::format("    \\bottomrule\n  \\end{{tabular}}\n  \\caption{{{} against {}. {}.}}\n\\end{{table}}\n",
                     tex_escape(r.table->title), tex_escape(r.comparison->against),
                     replace_all(tex_escape(comparison_description(r, "@MARK@")), "@MARK@", "$^\\sim$"));
  }
  return s;
}

}  // namespace

ReportFormat report_format_from_name(const std::string& name) {
  if (name == "md" || name == "markdown") return ReportFormat::markdown;
  if (name == "csv") return ReportFormat::csv;
  if (name == "latex" || name == "tex") return ReportFormat::latex;
  throw UserError(fmt::format("--format: \"{}\" is not one of md, csv, latex", name));
}

bool report_has_smoke_runs(const ReportResult& result) { return has_tag(result, kSmokeTag); }

std::string format_report(const ReportResult& result, ReportFormat format) {
  switch (format) {
    case ReportFormat::markdown: return markdown(result);
    case ReportFormat::csv: return csv(result);
    case ReportFormat::latex: break;
  }
  return latex(result);
}

}  // namespace mtbert
