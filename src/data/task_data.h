#pragma once
// Reading a task's split from the CS224N tab-separated files in
// ../shared/data (see its README): a header row whose first column is an
// unnamed row index, fields optionally quoted with " (doubled inside), CRLF or
// LF, blank lines ignored, and the odd header of the *-test-student files.
// Unlabeled (test) files are read without labels.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/task_spec.h"

namespace mtbert {

struct Example {
  std::string id;      // the data set's id column (used in prediction files)
  std::string text_a;
  std::string text_b;  // empty for single-text tasks
  double label = 0.0;  // class index, 0/1, or similarity; meaningless unless labeled
  int64_t line = 0;    // 1-based line of the row in its file, for messages
};

enum class BadRowPolicy { error, skip };

struct TaskSplit {
  std::string task;
  std::filesystem::path path;
  bool labeled = false;       // every example has a label
  std::vector<Example> examples;
  int64_t skipped_rows = 0;   // malformed rows skipped under BadRowPolicy::skip
};

struct ReadOptions {
  BadRowPolicy on_bad_row = BadRowPolicy::error;
  // Keep `limit` examples (0: all), for smoke runs and subsets: the first
  // ones, or with `random_subset` a uniform random sample of them (drawn with
  // `subset_seed`, kept in file order). The files of the CS224N data are not
  // shuffled (SST's first rows are mostly positive), so a subset meant to
  // stand for the whole should be random.
  int64_t limit = 0;
  bool random_subset = false;
  uint64_t subset_seed = 0;
  // Then keep this share of them, in (0, 1]: round(fraction * rows), at least
  // one, a uniform random draw from `subset_seed` (a stream of its own, so
  // that it does not repeat the subset's draw), kept in file order.
  double fraction = 1.0;
  // Labels must be present (train/dev): a row without one is malformed.
  bool require_labels = true;
};

// Throws UserError naming the file (and line, for a bad row: wrong column
// count, a label that is not a number or is outside the task's range, an
// unterminated quote) under BadRowPolicy::error; counts and skips such rows
// under BadRowPolicy::skip. A file with no label column is read as unlabeled
// when labels are not required.
TaskSplit read_task_split(const TaskSpec& task, const std::filesystem::path& path, const ReadOptions& options);

}  // namespace mtbert
