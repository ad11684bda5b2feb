#include "data/task_data.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/portable_random.h"
#include "core/user_error.h"
#include "core/utf8_check.h"
#include "data/tsv_reader.h"

namespace mtbert {

namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const auto first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

// A row that cannot become an example; what() says why, without file or line.
struct BadRow {
  std::string reason;
};

// Where the task's columns are in this file's header. The header is matched by
// name, not position: the test-student files' header has an extra leading
// column ("0", then the unnamed index), so the same column sits one place
// further right there.
struct ColumnLayout {
  std::size_t fields = 0;
  std::size_t id = 0;
  std::vector<std::size_t> texts;
  std::optional<std::size_t> label;
};

ColumnLayout locate_columns(const TaskSpec& task, const std::filesystem::path& path, const TsvRecord& header,
                            bool require_labels) {
  std::vector<std::string> names;
  for (const std::string& field : header.fields) names.emplace_back(trim(field));
  auto find = [&](const std::string& name) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return i;
    }
    return std::nullopt;
  };
  auto require = [&](const std::string& name, const char* what) {
    if (auto i = find(name)) return *i;
    throw UserError(fmt::format("{}:{}: no column '{}' ({} of task {}) in the header; its columns are [{}]",
                                path.string(), header.line, name, what, task.name, fmt::join(names, ", ")));
  };
  ColumnLayout layout;
  layout.fields = names.size();
  layout.id = require("id", "the example id");
  for (const std::string& column : task.text_columns) layout.texts.push_back(require(column, "a text"));
  if (require_labels) {
    layout.label = require(task.label_column, "the label");
  } else {
    layout.label = find(task.label_column);
  }
  return layout;
}

double parse_label(const TaskSpec& task, std::string_view text) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    throw BadRow{fmt::format("{} '{}' is not a number", task.label_column, text)};
  }
  if (value < task.label_min || value > task.label_max) {
    throw BadRow{fmt::format("{} {} is outside [{}, {}]", task.label_column, text, task.label_min, task.label_max)};
  }
  if (task.target != TaskTarget::regression && value != std::floor(value)) {
    throw BadRow{fmt::format("{} {} is not a class index (an integer from {} to {})", task.label_column, text,
                             task.label_min, task.label_max)};
  }
  return value;
}

// The example of one data row; `labeled` says whether it carried a label.
Example parse_row(const TaskSpec& task, const ColumnLayout& layout, const TsvRecord& record,
                  const ReadOptions& options, bool& labeled) {
  if (record.runaway_quote) {
    throw BadRow{"a field opened with a quote (\") is not closed on its line"};
  }
  if (record.fields.size() != layout.fields) {
    throw BadRow{fmt::format("{} tab-separated fields where the header has {}", record.fields.size(), layout.fields)};
  }
  Example example;
  example.line = record.line;
  example.id = std::string(trim(record.fields[layout.id]));
  if (example.id.empty()) throw BadRow{"the id is empty"};
  std::string* texts[] = {&example.text_a, &example.text_b};
  for (std::size_t t = 0; t < layout.texts.size(); ++t) {
    const std::string_view text = trim(record.fields[layout.texts[t]]);
    const std::string& column = task.text_columns[t];
    if (text.empty()) throw BadRow{fmt::format("{} is empty", column)};
    if (auto problem = utf8_problem(text, column)) throw BadRow{std::move(*problem)};
    *texts[t] = std::string(text);
  }
  labeled = false;
  if (layout.label) {
    const std::string_view text = trim(record.fields[*layout.label]);
    if (!text.empty()) {
      example.label = parse_label(task, text);
      labeled = true;
    } else if (options.require_labels) {
      throw BadRow{fmt::format("{} is empty", task.label_column)};
    }
  }
  return example;
}

// `count` of the examples, each subset equally likely, in their original order.
std::vector<Example> random_subset(std::vector<Example> examples, int64_t count, uint64_t seed, uint64_t stream) {
  std::vector<size_t> order(examples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rng = seeded_generator(seed, stream);
  portable_shuffle(order, rng);
  order.resize(static_cast<size_t>(count));
  std::sort(order.begin(), order.end());
  std::vector<Example> kept;
  kept.reserve(order.size());
  for (const size_t i : order) kept.push_back(std::move(examples[i]));
  return kept;
}

}  // namespace

TaskSplit read_task_split(const TaskSpec& task, const std::filesystem::path& path, const ReadOptions& options) {
  if (options.limit < 0) throw UserError(fmt::format("limit must be 0 (all rows) or positive, not {}", options.limit));
  if (!(options.fraction > 0 && options.fraction <= 1))
    throw UserError(fmt::format("the share of rows kept must be in (0, 1], not {}", options.fraction));
  // Rows are streamed: a file of any size is read only as far as the rows
  // wanted. A split held whole must fit in memory.
  const uint64_t size = check_input_file(path);
  if ((options.limit == 0 || options.random_subset) && size > limits::kTaskFileBytes)
    throw UserError(fmt::format("{}: {} is more than a split read whole may hold ({}); give the task a limit "
                                "(limit_train, limit_dev or limit_test) to read its first rows",
                                path.string(), describe_bytes(size), describe_bytes(limits::kTaskFileBytes)));
  TsvReader reader = TsvReader::from_file(path);
  TsvRecord record;
  if (!reader.next(record)) {
    throw UserError(fmt::format("{}: the file is empty; expected a header row and data rows of task {}",
                                path.string(), task.name));
  }
  if (record.runaway_quote) {
    throw UserError(fmt::format("{}:{}: the header row has a field opened with a quote (\") that is never closed",
                                path.string(), record.line));
  }
  const ColumnLayout layout = locate_columns(task, path, record, options.require_labels);
  reader.set_width(layout.fields);

  TaskSplit split;
  split.task = task.name;
  split.path = path;
  bool all_labeled = layout.label.has_value();
  // Ids name the rows of prediction files: each must be unique in its split.
  std::unordered_map<std::string, int64_t> first_line_of_id;
  // A random subset needs every row first; the first rows need only those.
  const int64_t read_limit = options.random_subset ? 0 : options.limit;
  while ((read_limit == 0 || static_cast<int64_t>(split.examples.size()) < read_limit) && reader.next(record)) {
    try {
      bool labeled = false;
      Example example = parse_row(task, layout, record, options, labeled);
      const auto [seen, fresh] = first_line_of_id.emplace(example.id, example.line);
      if (!fresh) throw BadRow{fmt::format("id \"{}\" appears again (first at line {})", example.id, seen->second)};
      split.examples.push_back(std::move(example));
      all_labeled = all_labeled && labeled;
    } catch (const BadRow& bad) {
      if (options.on_bad_row == BadRowPolicy::skip) {
        ++split.skipped_rows;
        continue;
      }
      throw UserError(fmt::format("{}:{}: {}; fix the row, or skip malformed rows (on_bad_row: skip)",
                                  path.string(), record.line, bad.reason));
    }
  }
  split.labeled = all_labeled;
  if (options.random_subset && options.limit > 0 && static_cast<int64_t>(split.examples.size()) > options.limit)
    split.examples = random_subset(std::move(split.examples), options.limit, options.subset_seed, /*stream=*/0);
  if (options.fraction < 1 && !split.examples.empty()) {
    const auto rows = static_cast<double>(split.examples.size());
    const int64_t kept = std::max<int64_t>(1, std::llround(options.fraction * rows));
    split.examples = random_subset(std::move(split.examples), kept, options.subset_seed, /*stream=*/1);
  }
  return split;
}

}  // namespace mtbert
