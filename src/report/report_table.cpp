#include "report/report_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/config_reader.h"
#include "core/did_you_mean.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail_at(const ConfigOrigin& origin, const std::string& key_path, const std::string& message) {
  throw UserError(fmt::format("{}: {}: {}", origin.describe(), key_path, message));
}

void read_columns(const ConfigNode& node, ReportTable& table) {
  if (!node.is_map() || node.entries.empty())
    fail_at(node.origin, "columns",
            fmt::format("expected a map of column keys (a task, or overall) to the paper's headers, e.g. "
                        "{{sst: SST, overall: Overall}}, got {}",
                        node.is_map() ? "an empty one" : describe_value(node)));
  for (const auto& [key, label] : node.entries) {
    if (label.kind != ConfigNode::Kind::scalar)
      fail_at(label.origin, "columns." + key, fmt::format("expected the column's header, got {}", describe_value(label)));
    table.columns.push_back(ReportColumn{key, label.text});
  }
}

double read_number(const ConfigNode& node, const std::string& where) {
  double value = 0;
  const std::string& t = node.text;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (node.kind != ConfigNode::Kind::scalar || t.empty() || ec != std::errc() || end != t.data() + t.size() ||
      !std::isfinite(value))
    fail_at(node.origin, where, fmt::format("expected a number, got {}", describe_value(node)));
  return value;
}

ReportRow read_row(const ConfigNode& node, size_t index, const ReportTable& table) {
  const std::string where = fmt::format("rows[{}]", index);
  if (!node.is_map())
    fail_at(node.origin, where, fmt::format("expected a row (label:, run:, paper:), got {}", describe_value(node)));
  ReportRow row;
  ConfigReader r(&node, where, node.origin);
  r.read("label", row.label);
  r.check(!row.label.empty(), "label", "missing: the row's name in the paper's table");
  r.read("run", row.run);
  r.check(!row.run.empty(), "run", "missing: the sweep's run (or runs, over seeds) behind this row");
  row.run_origin = r.origin("run");
  r.read("split", row.split);
  r.check_choice("split", row.split, {"dev", "test"});
  if (const ConfigNode* paper = r.raw("paper")) {
    if (!paper->is_map())
      r.fail("paper", fmt::format("expected a map of column keys to the paper's numbers, got {}", describe_value(*paper)));
    for (const auto& [key, value] : paper->entries) {
      const std::string key_where = fmt::format("{}.paper.{}", where, key);
      bool known = false;
      for (const auto& column : table.columns) known = known || column.key == key;
      if (!known) fail_at(value.origin, key_where, "not one of the table's columns");
      if (value.kind == ConfigNode::Kind::null) continue;  // not reported by the paper
      row.paper[key] = read_number(value, key_where);
    }
  }
  r.finish();
  return row;
}

}  // namespace

ReportTable load_report_table(const fs::path& path) {
  const ConfigNode root = read_config_map_file(path, "table", "title:, sweep:, columns:, rows:");
  ReportTable table;
  table.source = path;
  ConfigReader r(root);
  table.title = path.stem().string();
  r.read("title", table.title);
  std::string sweep;
  r.read("sweep", sweep);
  r.check(!sweep.empty(), "sweep", "missing: the sweep file whose runs fill the table");
  table.sweep = fs::path(sweep).is_relative() ? (path.parent_path() / sweep).lexically_normal() : fs::path(sweep);
  const ConfigNode* columns = r.raw("columns");
  r.check(columns != nullptr, "columns", "missing: e.g. {sst: SST, para: Quora, sts: STS, overall: Overall}");
  read_columns(*columns, table);
  const ConfigNode* rows = r.raw("rows");
  r.check(rows != nullptr && rows->kind == ConfigNode::Kind::sequence && !rows->items.empty(), "rows",
          "expected a list of rows (label:, run:, paper:)");
  for (size_t i = 0; i < rows->items.size(); ++i) table.rows.push_back(read_row(rows->items[i], i, table));
  r.read("against", table.against);
  std::vector<std::string> labels;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    // A label names its row in the table and for `against`.
    const auto same = std::find(labels.begin(), labels.end(), table.rows[i].label);
    if (same != labels.end())
      fail_at(rows->items[i].origin, fmt::format("rows[{}].label", i),
              fmt::format("\"{}\" is rows[{}]'s label too: give each row its own", table.rows[i].label,
                          same - labels.begin()));
    labels.push_back(table.rows[i].label);
  }
  r.check(table.against.empty() || std::find(labels.begin(), labels.end(), table.against) != labels.end(), "against",
          fmt::format("no row \"{}\"{} (the rows: {})", table.against, did_you_mean_suffix(table.against, labels),
                      fmt::join(labels, ", ")));
  r.finish();
  return table;
}

}  // namespace mtbert
