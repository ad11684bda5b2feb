#include "data/task_data.h"

#include <sys/stat.h>

#include <set>
#include <tuple>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using mtbert::BadRowPolicy;
using mtbert::ReadOptions;
using mtbert::TaskSplit;
using mtbert::UserError;

namespace {

const mtbert::TaskSpec& sst() { return mtbert::builtin_task("sst"); }
const mtbert::TaskSpec& para() { return mtbert::builtin_task("para"); }
const mtbert::TaskSpec& sts() { return mtbert::builtin_task("sts"); }

ReadOptions skipping() {
  ReadOptions o;
  o.on_bad_row = BadRowPolicy::skip;
  return o;
}

ReadOptions unlabeled() {
  ReadOptions o;
  o.require_labels = false;
  return o;
}

// An SST file of `rows` rows with ids id0, id1, ... and labels cycling 0-4.
std::filesystem::path write_sst_rows(const mtbert::test::TempDir& dir, const std::string& name, int rows) {
  std::string text = "\tid\tsentence\tsentiment\n";
  for (int i = 0; i < rows; ++i)
    text += std::to_string(i) + "\tid" + std::to_string(i) + "\ttext\t" + std::to_string(i % 5) + "\n";
  return dir.write(name, text);
}

}  // namespace

TEST_CASE("a labeled single-text file", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("sst.csv",
                              "\tid\tsentence\tsentiment\n"
                              "0\ta1\t It 's a lovely film .\t3\n"
                              "1\ta2\tDull .\t0\n");
  const TaskSplit split = mtbert::read_task_split(sst(), path, {});
  CHECK(split.task == "sst");
  CHECK(split.path == path);
  CHECK(split.labeled);
  CHECK(split.skipped_rows == 0);
  REQUIRE(split.examples.size() == 2);
  CHECK(split.examples[0].id == "a1");
  CHECK(split.examples[0].text_a == "It 's a lovely film .");  // surrounding spaces trimmed, as the starter code does
  CHECK(split.examples[0].text_b.empty());
  CHECK(split.examples[0].label == 3.0);
  CHECK(split.examples[0].line == 2);
  CHECK(split.examples[1].label == 0.0);
  CHECK(split.examples[1].line == 3);
}

TEST_CASE("columns are found by name, in any order", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("sts.csv",
                              "similarity\tsentence2\textra\tid\tsentence1\n"
                              "4.6\tTwo dogs play.\tzzz\tq1\tTwo black dogs play.\n");
  const TaskSplit split = mtbert::read_task_split(sts(), path, {});
  REQUIRE(split.examples.size() == 1);
  CHECK(split.examples[0].id == "q1");
  CHECK(split.examples[0].text_a == "Two black dogs play.");
  CHECK(split.examples[0].text_b == "Two dogs play.");
  CHECK(split.examples[0].label == 4.6);
}

TEST_CASE("the odd header of the test-student files", "[task_data]") {
  // As in ids-sst-test-student.csv: "0 <tab> <tab> id <tab> sentence", rows
  // shifted by an extra index column holding 0.0, 1.0, ...
  mtbert::test::TempDir dir;
  const auto path = dir.write("test.csv",
                              "0\t\tid\tsentence\n"
                              "1\t0.0\tb757\t Effective but too-tepid biopic\n"
                              "2\t1.0\td17a\t If you sometimes like to go to the movies .\n");
  const TaskSplit split = mtbert::read_task_split(sst(), path, unlabeled());
  CHECK_FALSE(split.labeled);
  REQUIRE(split.examples.size() == 2);
  CHECK(split.examples[0].id == "b757");
  CHECK(split.examples[0].text_a == "Effective but too-tepid biopic");
  CHECK(split.examples[1].id == "d17a");
  // A labeled read of it names the missing column.
  CHECK_THROWS_AS(mtbert::read_task_split(sst(), path, {}), UserError);
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), path, {}),
                    ContainsSubstring("test.csv:1") && ContainsSubstring("'sentiment'") && ContainsSubstring("[0, , id, sentence]"));
}

TEST_CASE("unlabeled reads: no label column, or empty labels", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto empty_labels = dir.write("e.csv", "\tid\tsentence1\tsentence2\tis_duplicate\n0\tp\ta?\tb?\t\n");
  const TaskSplit split = mtbert::read_task_split(para(), empty_labels, unlabeled());
  CHECK_FALSE(split.labeled);
  REQUIRE(split.examples.size() == 1);
  CHECK(split.examples[0].text_b == "b?");
  // A labeled file read without requiring labels is still labeled.
  const auto labeled = dir.write("l.csv", "\tid\tsentence1\tsentence2\tis_duplicate\n0\tp\ta?\tb?\t1.0\n");
  const TaskSplit with_labels = mtbert::read_task_split(para(), labeled, unlabeled());
  CHECK(with_labels.labeled);
  CHECK(with_labels.examples[0].label == 1.0);
  // Some labels missing: not labeled as a whole.
  const auto mixed = dir.write("m.csv", "\tid\tsentence1\tsentence2\tis_duplicate\n0\tp\ta?\tb?\t1.0\n1\tq\tc?\td?\t\n");
  CHECK_FALSE(mtbert::read_task_split(para(), mixed, unlabeled()).labeled);
}

TEST_CASE("quoted fields, CRLF, a byte order mark and blank lines", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("q.csv",
                              "\xEF\xBB\xBF\tid\tsentence1\tsentence2\tis_duplicate\r\n"
                              "\r\n"
                              "0\tp1\t\"\"\"What does \"\"turning\"\" mean?\"\"\"\t\"a\ttab and a\nline break\"\t0.0\r\n"
                              "\r\n"
                              "1\tp2\tplain?\tplain!\t1\r\n");
  const TaskSplit split = mtbert::read_task_split(para(), path, {});
  REQUIRE(split.examples.size() == 2);
  CHECK(split.examples[0].text_a == "\"What does \"turning\" mean?\"");
  CHECK(split.examples[0].text_b == "a\ttab and a\nline break");
  CHECK(split.examples[0].label == 0.0);
  CHECK(split.examples[0].line == 3);
  CHECK(split.examples[1].line == 6);
  CHECK(split.examples[1].label == 1.0);
}

TEST_CASE("bad rows: UserError naming file and line, or skipped and counted", "[task_data]") {
  mtbert::test::TempDir dir;
  const std::string header = "\tid\tsentence\tsentiment\n";
  struct Case {
    std::string row;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"0\ta\ttoo few fields\n", "3 tab-separated fields where the header has 4"},
      {"0\ta\ttoo\tmany\t3\n", "5 tab-separated fields where the header has 4"},
      {"0\ta\tnot a number\tgood\n", "sentiment 'good' is not a number"},
      {"0\ta\tpartly a number\t3x\n", "sentiment '3x' is not a number"},
      {"0\ta\tout of range\t5\n", "sentiment 5 is outside [0, 4]"},
      {"0\ta\tnegative\t-1\n", "sentiment -1 is outside [0, 4]"},
      {"0\ta\tnot a class\t2.5\n", "sentiment 2.5 is not a class index"},
      {"0\ta\tnan\tnan\n", "sentiment 'nan' is not a number"},
      {"0\ta\tno label\t\n", "sentiment is empty"},
      {"0\ta\t  \t3\n", "sentence is empty"},
      {"0\t \tno id\t3\n", "the id is empty"},
      {"0\ta\t\"never closed\t3\n", "a field opened with a quote (\") is not closed on its line"},
      {"0\ta\tbad \xC3\x28 bytes\t3\n", "invalid UTF-8 at byte 5 of sentence"},
  };
  for (const Case& c : cases) {
    INFO(c.row);
    const auto path = dir.write("bad.csv", header + "0\tok1\tfine\t1\n" + c.row + "2\tok2\talso fine\t2\n");
    CHECK_THROWS_AS(mtbert::read_task_split(sst(), path, {}), UserError);
    CHECK_THROWS_WITH(mtbert::read_task_split(sst(), path, {}),
                      ContainsSubstring(path.string() + ":3: " + c.reason) && ContainsSubstring("on_bad_row: skip"));
    const TaskSplit split = mtbert::read_task_split(sst(), path, skipping());
    CHECK(split.skipped_rows == 1);
    REQUIRE(split.examples.size() == 2);
    CHECK(split.examples[0].id == "ok1");
    CHECK(split.examples[1].id == "ok2");
    CHECK(split.examples[1].line == 4);
  }
}

TEST_CASE("regression labels may be fractional, binary labels written 0.0/1.0", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto sts_file = dir.write("s.csv", "\tid\tsentence1\tsentence2\tsimilarity\n0\ta\tx\ty\t2.75\n1\tb\tx\ty\t5.0\n");
  const TaskSplit s = mtbert::read_task_split(sts(), sts_file, {});
  CHECK(s.examples[0].label == 2.75);
  CHECK(s.examples[1].label == 5.0);
  const auto over = dir.write("o.csv", "\tid\tsentence1\tsentence2\tsimilarity\n0\ta\tx\ty\t5.2\n");
  CHECK_THROWS_WITH(mtbert::read_task_split(sts(), over, {}), ContainsSubstring("similarity 5.2 is outside [0, 5]"));
  const auto para_file = dir.write("p.csv", "\tid\tsentence1\tsentence2\tis_duplicate\n0\ta\tx\ty\t0.5\n");
  CHECK_THROWS_WITH(mtbert::read_task_split(para(), para_file, {}), ContainsSubstring("is_duplicate 0.5 is not a class index"));
}

TEST_CASE("limit keeps the first N examples", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = write_sst_rows(dir, "l.csv", 10);
  ReadOptions o;
  o.limit = 3;
  const TaskSplit split = mtbert::read_task_split(sst(), path, o);
  REQUIRE(split.examples.size() == 3);
  CHECK(split.examples[2].id == "id2");
  o.limit = 100;
  CHECK(mtbert::read_task_split(sst(), path, o).examples.size() == 10);
  o.limit = -1;
  CHECK_THROWS_AS(mtbert::read_task_split(sst(), path, o), UserError);
}

TEST_CASE("a random subset keeps N examples in file order, the same for the same seed", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = write_sst_rows(dir, "r.csv", 200);
  ReadOptions o;
  o.limit = 50;
  o.random_subset = true;
  o.subset_seed = 7;
  const TaskSplit a = mtbert::read_task_split(sst(), path, o);
  REQUIRE(a.examples.size() == 50);
  std::set<std::string> ids;
  for (size_t i = 0; i < a.examples.size(); ++i) {
    ids.insert(a.examples[i].id);
    if (i > 0) CHECK(a.examples[i - 1].line < a.examples[i].line);  // file order
  }
  CHECK(ids.size() == 50);
  // Not the first 50, and drawn from the whole file.
  CHECK(a.examples.back().line > 100);
  CHECK(a.examples[49].id != "id49");
  const TaskSplit b = mtbert::read_task_split(sst(), path, o);
  for (size_t i = 0; i < 50; ++i) CHECK(a.examples[i].id == b.examples[i].id);
  o.subset_seed = 8;
  const TaskSplit c = mtbert::read_task_split(sst(), path, o);
  int same = 0;
  for (size_t i = 0; i < 50; ++i) same += a.examples[i].id == c.examples[i].id;
  CHECK(same < 50);
  // Each row is kept with probability 50/200: labels 0..4 all appear.
  std::set<double> labels;
  for (const auto& ex : a.examples) labels.insert(ex.label);
  CHECK(labels.size() == 5);
  o.limit = 300;  // more than there are: all of them
  CHECK(mtbert::read_task_split(sst(), path, o).examples.size() == 200);
}

// The DeBERTa report trims Quora "by 70%": a fraction of what the limit
// leaves, drawn apart from the subset's own draw.
TEST_CASE("a fraction keeps that share of the rows, drawn with the seed, after the limit", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto path = write_sst_rows(dir, "f.csv", 200);
  ReadOptions o;
  o.fraction = 0.3;
  o.subset_seed = 7;
  const TaskSplit a = mtbert::read_task_split(sst(), path, o);
  REQUIRE(a.examples.size() == 60);
  for (size_t i = 1; i < a.examples.size(); ++i) CHECK(a.examples[i - 1].line < a.examples[i].line);
  CHECK(a.examples.back().line > 150);  // drawn from the whole file, not its head
  const TaskSplit again = mtbert::read_task_split(sst(), path, o);
  for (size_t i = 0; i < 60; ++i) CHECK(a.examples[i].id == again.examples[i].id);
  o.subset_seed = 8;
  int same = 0;
  const TaskSplit other = mtbert::read_task_split(sst(), path, o);
  for (size_t i = 0; i < 60; ++i) same += a.examples[i].id == other.examples[i].id;
  CHECK(same < 60);

  // After a random limit: 30% of the 100 it keeps, a different draw from it.
  o.limit = 100;
  o.random_subset = true;
  const TaskSplit limited = mtbert::read_task_split(sst(), path, o);
  CHECK(limited.examples.size() == 30);
  o.fraction = 1.0;
  const TaskSplit whole_limit = mtbert::read_task_split(sst(), path, o);
  REQUIRE(whole_limit.examples.size() == 100);
  std::set<std::string> in_limit;
  for (const auto& ex : whole_limit.examples) in_limit.insert(ex.id);
  for (const auto& ex : limited.examples) CHECK(in_limit.count(ex.id) == 1);

  // Rounding keeps at least one row; 0 and values above 1 are refused.
  o.limit = 0;
  o.random_subset = false;
  o.fraction = 1e-6;
  CHECK(mtbert::read_task_split(sst(), path, o).examples.size() == 1);
  for (const double bad : {0.0, -0.5, 1.5}) {
    o.fraction = bad;
    CHECK_THROWS_WITH(mtbert::read_task_split(sst(), path, o), ContainsSubstring("share of rows kept"));
  }
}

TEST_CASE("files that cannot be read as a task split", "[task_data]") {
  mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), dir / "missing.csv", {}),
                    ContainsSubstring("missing.csv") && ContainsSubstring("no such file"));
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), dir.write("empty.csv", "\n\n"), {}),
                    ContainsSubstring("empty.csv") && ContainsSubstring("empty"));
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), dir.write("noid.csv", "\tsentence\tsentiment\n0\tx\t1\n"), {}),
                    ContainsSubstring("noid.csv:1") && ContainsSubstring("no column 'id'"));
  // An SST file given to a pair task.
  CHECK_THROWS_WITH(mtbert::read_task_split(para(), dir.write("s.csv", "\tid\tsentence\tsentiment\n0\ta\tx\t1\n"), {}),
                    ContainsSubstring("no column 'sentence1'") && ContainsSubstring("task para"));
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), dir.path(), {}), ContainsSubstring(": is a directory, not a file"));
  REQUIRE(::mkfifo((dir / "fifo.csv").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), dir / "fifo.csv", {}), ContainsSubstring("fifo.csv: is a FIFO"));
  // A header with only a label-less file still reads, as an empty split.
  const TaskSplit empty = mtbert::read_task_split(sst(), dir.write("h.csv", "\tid\tsentence\tsentiment\n"), {});
  CHECK(empty.examples.empty());
}

TEST_CASE("every CS224N data file reads with the README's row counts", "[task_data][shared_data]") {
  const auto data = mtbert::test::shared_data_dir();
  if (!data) MTBERT_SKIP("../shared/data is not on this machine");
  struct File {
    std::string name;
    std::string task;
    bool labeled;
    int64_t rows;     // ../shared/data/README.md
    int64_t skipped;  // rows without a label (Quora's mangled quoting)
  };
  const std::vector<File> files = {
      {"ids-sst-train.csv", "sst", true, 8544, 0},
      {"ids-sst-dev.csv", "sst", true, 1101, 0},
      {"ids-sst-test-student.csv", "sst", false, 2210, 0},
      {"ids-cfimdb-train.csv", "cfimdb", true, 1707, 0},
      {"ids-cfimdb-dev.csv", "cfimdb", true, 245, 0},
      {"ids-cfimdb-test-student.csv", "cfimdb", false, 488, 0},
      {"quora-dev.csv", "para", true, 20214, 2},
      {"quora-dev-split-train.csv", "para", true, 16000, 1},
      {"quora-dev-split-dev.csv", "para", true, 4214, 1},
      {"sts-train.csv", "sts", true, 6040, 0},
      {"sts-dev.csv", "sts", true, 863, 0},
      {"sts-test-student.csv", "sts", false, 1725, 0},
  };
  for (const File& f : files) {
    INFO(f.name);
    ReadOptions o = skipping();
    o.require_labels = f.labeled;
    const TaskSplit split = mtbert::read_task_split(mtbert::builtin_task(f.task), *data / f.name, o);
    CHECK(static_cast<int64_t>(split.examples.size()) + split.skipped_rows == f.rows);
    CHECK(split.skipped_rows == f.skipped);
    CHECK(split.labeled == f.labeled);
  }

  // The two Quora rows without a label, by line, under the default policy.
  CHECK_THROWS_WITH(mtbert::read_task_split(para(), *data / "quora-dev.csv", {}),
                    ContainsSubstring("quora-dev.csv:2577: is_duplicate is empty"));

  // Spot checks against Python's csv module.
  const TaskSplit test = mtbert::read_task_split(sst(), *data / "ids-sst-test-student.csv", unlabeled());
  CHECK(test.examples[0].id == "b7573736a6ddf7be102b7fee0");
  CHECK(test.examples[0].text_a == "Effective but too-tepid biopic");
  const TaskSplit quora = mtbert::read_task_split(para(), *data / "quora-dev-split-dev.csv", skipping());
  CHECK(quora.examples[1].id == "98d19d73b11d52679505fde94");
  CHECK(quora.examples[1].text_a == "\"What does \"\"turning the ship slowly\"\" mean?\"");
  CHECK(quora.examples[1].label == 0.0);
  const TaskSplit sts_dev = mtbert::read_task_split(sts(), *data / "sts-dev.csv", {});
  CHECK(sts_dev.examples[1].label == 4.6);
  CHECK(sts_dev.examples[1].text_b == "Two black dogs are playing in a grassy plain.");
}

TEST_CASE("the quickstart data reads as task splits", "[task_data]") {
  // Under the real files' names (scripts/make_quickstart_data.py); Quora has no test file.
  const auto dir = mtbert::test::source_dir() / "experiments" / "data" / "quickstart";
  const std::vector<std::tuple<std::string, std::string, int64_t>> files = {
      {"sst", "ids-sst-train.csv", 1500},       {"sst", "ids-sst-dev.csv", 300},
      {"sst", "ids-sst-test-student.csv", 300}, {"para", "quora-dev-split-train.csv", 1500},
      {"para", "quora-dev-split-dev.csv", 300}, {"sts", "sts-train.csv", 1500},
      {"sts", "sts-dev.csv", 300},              {"sts", "sts-test-student.csv", 300}};
  for (const auto& [task, file, rows] : files) {
    INFO(file);
    const bool test = file.find("test") != std::string::npos;
    ReadOptions o;
    o.require_labels = !test;
    const TaskSplit data = mtbert::read_task_split(mtbert::builtin_task(task), dir / file, o);
    CHECK(static_cast<int64_t>(data.examples.size()) == rows);
    CHECK(data.skipped_rows == 0);
    CHECK(data.labeled == !test);
    CHECK(data.examples.front().id.size() == 25);
    CHECK_FALSE(data.examples.back().text_a.empty());
    CHECK(data.examples.back().text_b.empty() == (task == "sst"));
  }
}

TEST_CASE("an id that appears twice is a bad row", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto file = dir.write("dup.csv", "\tid\tsentence\tsentiment\n0\ta\tx\t1\n1\tb\ty\t2\n2\ta\tz\t3\n");
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), file, {}),
                    ContainsSubstring("dup.csv:4: id \"a\" appears again (first at line 2)"));
  mtbert::ReadOptions skip;
  skip.on_bad_row = mtbert::BadRowPolicy::skip;
  const TaskSplit split = mtbert::read_task_split(sst(), file, skip);
  CHECK(split.examples.size() == 2);
  CHECK(split.skipped_rows == 1);
}

TEST_CASE("a split too large to hold whole needs a limit, and a limit reads only its rows", "[task_data]") {
  mtbert::test::TempDir dir;
  const auto file = dir.write("huge.csv", "\tid\tsentence\tsentiment\n0\ta\tx\t1\n1\tb\ty\t2\n");
  std::error_code ec;
  std::filesystem::resize_file(file, 8ull << 30, ec);  // sparse: no disk is used
  if (ec) MTBERT_SKIP("cannot make a sparse 8 GiB file here: " + ec.message());
  CHECK_THROWS_WITH(mtbert::read_task_split(sst(), file, {}),
                    ContainsSubstring("huge.csv: 8.6 GB is more than a split read whole may hold"));
  mtbert::ReadOptions first;
  first.limit = 2;
  CHECK(mtbert::read_task_split(sst(), file, first).examples.size() == 2);
}
