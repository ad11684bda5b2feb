// Sweep files: what is read, and every mistake as one line naming file, line
// and key.
#include "sweep/sweep_spec.h"

#include "support/temp_dir.h"
#include "support/test_support.h"
#include "support/user_error_of.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

std::string error_of(const mtbert::test::TempDir& dir, const std::string& text) {
  return mtbert::test::user_error_of([&] { mtbert::load_sweep(dir.write("s.yaml", text)); });
}

}  // namespace

TEST_CASE("a sweep file is read with its values and where they were written", "[sweep_spec]") {
  mtbert::test::TempDir dir;
  std::filesystem::create_directories(dir / "sweeps");
  const auto path = dir.write("sweeps/table.yaml",
                              "name: final-table1\n"
                              "output_root: runs/t1\n"
                              "experiments: [../final/baseline.yaml, /abs/smart.yaml]\n"
                              "grid:\n"
                              "  train.lr: [1.0e-5, 2.0e-5]\n"
                              "  tasks.sst.dropout: [0.1]\n"
                              "list:\n"
                              "  - {train.batch_size: 8, train.epochs: 3}\n"
                              "  - {}\n"
                              "seeds: [11711, 1]\n"
                              "overrides: [train.max_steps=5]\n");
  const auto s = mtbert::load_sweep(path);
  CHECK(s.name == "final-table1");
  CHECK(s.output_root == "runs/t1");
  REQUIRE(s.experiments.size() == 2);
  CHECK(s.experiments[0].path == dir / "final" / "baseline.yaml");
  CHECK(s.experiments[1].path == "/abs/smart.yaml");
  CHECK(s.experiments[0].origin.line == 3);
  REQUIRE(s.grid.size() == 2);
  CHECK(s.grid[0].first == "train.lr");
  REQUIRE(s.grid[0].second.size() == 2);
  CHECK(s.grid[0].second[1].text == "2.0e-5");
  CHECK(s.grid[0].second[1].origin.line == 5);
  CHECK(s.grid[1].first == "tasks.sst.dropout");
  REQUIRE(s.list.size() == 2);
  REQUIRE(s.list[0].size() == 2);
  CHECK(s.list[0][1].key == "train.epochs");
  CHECK(s.list[0][1].value.text == "3");
  CHECK(s.list[1].empty());
  REQUIRE(s.seeds.size() == 2);
  CHECK(s.seeds[0].value == 11711);
  CHECK(s.seeds[1].origin.line == 10);
  REQUIRE(s.overrides.size() == 1);
  CHECK(s.overrides[0].text == "train.max_steps=5");
  CHECK(s.overrides[0].origin.describe() == path.string() + ":11");
}

TEST_CASE("an experiment entry may carry its own name and overrides", "[sweep_spec]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("s.yaml",
                              "experiments:\n"
                              "  - exp/emd.yaml\n"
                              "  - file: exp/emd.yaml\n"
                              "    name: pretrained_emd\n"
                              "    overrides: [model.pretrained=m/deberta, train.lr=2e-4]\n"
                              "  - {file: exp/log_bucket.yaml, overrides: model.pretrained=m/other}\n");
  const auto s = mtbert::load_sweep(path);
  REQUIRE(s.experiments.size() == 3);
  CHECK(s.experiments[0].name == "emd");
  CHECK(s.experiments[0].overrides.empty());
  CHECK(s.experiments[1].path == dir / "exp" / "emd.yaml");
  CHECK(s.experiments[1].name == "pretrained_emd");
  REQUIRE(s.experiments[1].overrides.size() == 2);
  CHECK(s.experiments[1].overrides[1].text == "train.lr=2e-4");
  CHECK(s.experiments[1].overrides[1].origin.line == 5);
  CHECK(s.experiments[2].name == "log_bucket");
  REQUIRE(s.experiments[2].overrides.size() == 1);

  const std::string f = (dir / "s.yaml").string();
  CHECK_THAT(error_of(dir, "experiments:\n  - {name: x}\n"),
             Equals(f + ":2: experiments[0]: missing file: the experiment file of this entry"));
  CHECK_THAT(error_of(dir, "experiments:\n  - {file: a.yaml, name: a/b}\n"),
             ContainsSubstring(":2: experiments[0].name: \"a/b\" cannot start a run's name"));
  CHECK_THAT(error_of(dir, "experiments:\n  - {file: a.yaml, overide: [train.lr=1]}\n"),
             ContainsSubstring("experiments[0].overide: unknown key"));
  CHECK_THAT(error_of(dir, "experiments:\n  - {file: a.yaml, overrides: [train.lr]}\n"),
             ContainsSubstring("experiments[0].overrides[0]: \"train.lr\" is not an override"));
  CHECK_THAT(error_of(dir, "experiments:\n  - {file: a.yaml, overrides: [seed=3]}\n"),
             ContainsSubstring("experiments[0].overrides[0]: vary seeds with"));
}

TEST_CASE("a sweep's name and output root default to its file's stem", "[sweep_spec]") {
  mtbert::test::TempDir dir;
  const auto s = mtbert::load_sweep(dir.write("lr-ablation.yaml", "experiments: base.yaml\n"));
  CHECK(s.name == "lr-ablation");
  CHECK(s.output_root == "runs/lr-ablation");
  REQUIRE(s.experiments.size() == 1);
  CHECK(s.experiments[0].path == dir / "base.yaml");
  CHECK(s.grid.empty());
  CHECK(s.list.empty());
  CHECK(s.seeds.empty());
}

TEST_CASE("a bad sweep file is one line naming the file, line and key", "[sweep_spec]") {
  mtbert::test::TempDir dir;
  const std::string f = (dir / "s.yaml").string();
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngird: {train.lr: [1]}\n"),
             Equals(f + ":2: gird: unknown key (did you mean \"grid\"?)"));
  CHECK_THAT(error_of(dir, "grid: {train.lr: [1]}\n"), Equals(f + ":1: experiments: missing: list the experiment files, e.g. [../base.yaml]"));
  CHECK_THAT(error_of(dir, "experiments: []\n"), ContainsSubstring(":1: experiments: the list is empty"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {train.lr: 1e-5}\n"),
             Equals(f + ":2: grid.train.lr: expected a list of values, e.g. [1e-5, 2e-5], got '1e-5'"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid:\n  train.lr: [1, 2, 1]\n"),
             Equals(f + ":3: grid.train.lr: a value appears twice: keep one"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {train.lr: []}\n"), ContainsSubstring("grid.train.lr: no values"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {seed: [1, 2]}\n"), ContainsSubstring("grid.seed: vary seeds with"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {name: [a, b]}\n"), ContainsSubstring("grid.name: the sweep names"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {train..lr: [1]}\n"),
             ContainsSubstring("grid.train..lr: \"train..lr\" is not a config key path"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid: {train.lr: [1]}\nlist:\n  - {train.lr: 2}\n"),
             Equals(f + ":4: list[0].train.lr: the grid varies this key too: keep it in one of them"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\nlist: [train.lr=1]\n"),
             ContainsSubstring(":2: list[0]: expected a map of key paths to values, got 'train.lr=1'"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\nseeds: [1, x]\n"),
             Equals(f + ":2: seeds[1]: expected a non-negative integer, got 'x'"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\nseeds: [-1]\n"), ContainsSubstring("seeds[0]: expected a non-negative integer"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\nseeds:\n  - 3\n  - 3\n"), Equals(f + ":4: seeds[1]: seed 3 appears twice"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\noverrides: [train.lr]\n"),
             ContainsSubstring("overrides[0]: \"train.lr\" is not an override: write key.path=value"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\nname: a/b\n"), ContainsSubstring("name: \"a/b\" cannot name a sweep"));
  CHECK_THAT(error_of(dir, "- a\n"), ContainsSubstring("expected a sweep"));
  CHECK_THAT(error_of(dir, "experiments: [a.yaml\n"), ContainsSubstring("invalid YAML"));
  CHECK_THROWS_WITH(mtbert::load_sweep(dir / "absent.yaml"), ContainsSubstring("absent.yaml: the sweep file does not exist"));
}

TEST_CASE("a sweep of more runs than the limit is refused before anything is expanded", "[sweep_spec]") {
  mtbert::test::TempDir dir;
  std::string grid;
  for (const char* key : {"train.lr", "train.batch_size", "train.epochs", "tasks.sst.dropout"}) {
    grid += std::string("  ") + key + ": [";
    for (int i = 1; i <= 30; ++i) grid += (i > 1 ? ", " : "") + std::to_string(i);
    grid += "]\n";
  }
  CHECK_THAT(error_of(dir, "experiments: [a.yaml]\ngrid:\n" + grid),
             ContainsSubstring("the sweep has 810000 runs (1 experiment(s) x 30 train.lr x 30 train.batch_size x 30 "
                               "train.epochs x 30 tasks.sst.dropout); at most 1000 are allowed"));
  CHECK_NOTHROW(mtbert::load_sweep(dir.write("ok.yaml", "experiments: [a.yaml]\ngrid:\n  train.lr: [1, 2]\n")));
}
