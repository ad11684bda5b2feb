// Sweep expansion: which runs, in which order, under which names, with which
// overrides in which order; checked against expectations written by hand.
#include "sweep/sweep_expansion.h"

#include "config/config_tree.h"
#include "config/experiment_config.h"
#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> texts(const std::vector<mtbert::ConfigOverride>& overrides) {
  std::vector<std::string> out;
  for (const auto& o : overrides) out.push_back(o.text);
  return out;
}

std::vector<std::string> names(const std::vector<mtbert::SweepRun>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs) out.push_back(r.name);
  return out;
}

}  // namespace

TEST_CASE("experiments x grid x list x seeds, in order, with readable names", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(dir.write("s.yaml",
                                                 "experiments: [exp/baseline.yaml, exp/smart.yaml]\n"
                                                 "grid: {train.lr: [1.0e-5, 2.0e-5], tasks.sst.dropout: [0.1, 0.3]}\n"
                                                 "list: [{train.batch_size: 8}, {train.batch_size: 16, train.epochs: 3}]\n"
                                                 "seeds: [11711, 1]\n"
                                                 "overrides: [train.max_steps=5]\n"));
  const auto runs = mtbert::expand_sweep(spec, "out", {"device=cpu"});
  // 2 experiments x (2 x 2 grid points x 2 list entries) x 2 seeds.
  REQUIRE(runs.size() == 32);
  const std::vector<std::string> first_baseline{
      "baseline-lr1e-05-dropout0.1-batch_size8-seed11711",
      "baseline-lr1e-05-dropout0.1-batch_size8-seed1",
      "baseline-lr1e-05-dropout0.1-batch_size16-epochs3-seed11711",
      "baseline-lr1e-05-dropout0.1-batch_size16-epochs3-seed1",
      "baseline-lr1e-05-dropout0.3-batch_size8-seed11711",
  };
  for (size_t i = 0; i < first_baseline.size(); ++i) CHECK(runs[i].name == first_baseline[i]);
  CHECK(runs[8].name == "baseline-lr2e-05-dropout0.1-batch_size8-seed11711");
  CHECK(runs[16].name == "smart-lr1e-05-dropout0.1-batch_size8-seed11711");
  CHECK(runs[31].name == "smart-lr2e-05-dropout0.3-batch_size16-epochs3-seed1");

  const auto& r = runs[3];
  CHECK(r.group == "baseline-lr1e-05-dropout0.1-batch_size16-epochs3");
  CHECK(r.experiment == dir / "exp" / "baseline.yaml");
  CHECK(r.folder == fs::path("out") / "baseline-lr1e-05-dropout0.1-batch_size16-epochs3-seed1");
  REQUIRE(r.seed.has_value());
  CHECK(*r.seed == 1);
  // The sweep's overrides, the command line's, the point (grid keys, then the
  // list entry's), the seed, the name.
  CHECK(texts(r.overrides) == std::vector<std::string>{"train.max_steps=5", "device=cpu", "train.lr=1.0e-5",
                                                        "tasks.sst.dropout=0.1", "train.batch_size=16",
                                                        "train.epochs=3", "seed=1",
                                                        "name=baseline-lr1e-05-dropout0.1-batch_size16-epochs3-seed1"});
  CHECK(r.point == std::vector<std::string>{"train.lr=1.0e-5", "tasks.sst.dropout=0.1", "train.batch_size=16",
                                            "train.epochs=3", "seed=1"});
  // Each override remembers its line in the sweep file (the command line's: "command line").
  CHECK(r.overrides[0].origin.line == 5);
  CHECK(r.overrides[1].origin.describe() == "command line");
  CHECK(r.overrides[2].origin.line == 2);
  CHECK(r.overrides[4].origin.line == 3);
  CHECK(r.overrides[6].origin.line == 4);
}

TEST_CASE("without grid, list or seeds a run is named after its experiment", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(dir.write("s.yaml", "experiments: [a/baseline.yaml, b/cosine.yaml]\n"));
  const auto runs = mtbert::expand_sweep(spec, "runs/t");
  CHECK(names(runs) == std::vector<std::string>{"baseline", "cosine"});
  CHECK(runs[0].group == "baseline");
  CHECK_FALSE(runs[0].seed.has_value());
  CHECK(texts(runs[1].overrides) == std::vector<std::string>{"name=cosine"});
  CHECK(runs[1].point.empty());
}

TEST_CASE("seeds only: one run per seed, grouped by experiment", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(dir.write("s.yaml", "experiments: [smart.yaml]\nseeds: [11711, 2, 3]\n"));
  const auto runs = mtbert::expand_sweep(spec, "r");
  CHECK(names(runs) == std::vector<std::string>{"smart-seed11711", "smart-seed2", "smart-seed3"});
  for (const auto& run : runs) CHECK(run.group == "smart");
}

TEST_CASE("key names are shortened only as far as they stay distinct", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(dir.write(
      "s.yaml",
      "experiments: [e.yaml]\n"
      "grid: {tasks.sst.dropout: [0.3], tasks.para.dropout: [0.1], train.lr: [3e-5], lr: [1],\n"
      "       model.config.pos_att_type: ['c2p|p2c'], train.schedule: [{kind: cosine, final_lr: 0}],\n"
      "       model.tokenizer.train_from: [[a.txt, b.txt]], train.pcgrad.enabled: [true], train.epochs: [10.0]}\n"));
  const auto runs = mtbert::expand_sweep(spec, "r");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].name ==
        "e-sst_dropout0.3-para_dropout0.1-train_lr3e-05-lr1-pos_att_typec2p_p2c-schedulekind_cosine_final_lr_0"
        "-train_froma.txt_b.txt-enabledtrue-epochs10");
}

TEST_CASE("override values are YAML that reads back as written", "[sweep_expansion]") {
  const mtbert::ConfigOrigin origin{"x", 0};
  for (const std::string text :
       {"1.0e-5", "\"quoted: yes\"", "'c2p|p2c'", "[a, \"b, c\", [1, 2]]", "{kind: cosine, final_lr: 0}",
        "\"tab\\there\"", "${MTBERT_DATA:-../shared/data}/sst.csv", "true", "\"true\"", "null", "[]", "{}"}) {
    const auto node = mtbert::parse_config_yaml(text, origin);
    const std::string flow = mtbert::yaml_flow_text(node);
    const auto back = mtbert::parse_config_yaml(flow, origin);
    INFO(text << " -> " << flow);
    CHECK(mtbert::yaml_flow_text(back) == flow);
    CHECK(back.kind == node.kind);
    CHECK(back.text == node.text);
    // Quoted stays quoted; a plain value may come back quoted only where it
    // holds YAML's special characters, never a number, boolean or null.
    if (node.quoted) CHECK(back.quoted);
    CHECK(back.items.size() == node.items.size());
    CHECK(back.entries.size() == node.entries.size());
  }
  for (const std::string plain : {"1.0e-5", "-3", "true", "cosine", "../data/x.csv"})
    CHECK(mtbert::yaml_flow_text(mtbert::parse_config_yaml(plain, origin)) == plain);
  CHECK(mtbert::yaml_flow_text(mtbert::parse_config_yaml("[a, 'b, c']", origin)) == "[a, \"b, c\"]");
  CHECK(mtbert::yaml_flow_text(mtbert::parse_config_yaml("{k: 'x'}", origin)) == "{k: \"x\"}");
}

TEST_CASE("an entry's overrides come first, and its name names its runs", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(dir.write("s.yaml",
                                                 "experiments:\n"
                                                 "  - exp/emd.yaml\n"
                                                 "  - {file: exp/emd.yaml, name: pretrained, overrides: [model.pretrained=m]}\n"
                                                 "seeds: [1]\n"
                                                 "overrides: [train.epochs=2]\n"));
  const auto runs = mtbert::expand_sweep(spec, "out", {"device=cpu"});
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].name == "emd-seed1");
  CHECK(texts(runs[0].overrides) == std::vector<std::string>{"train.epochs=2", "device=cpu", "seed=1", "name=emd-seed1"});
  CHECK(runs[1].name == "pretrained-seed1");
  CHECK(runs[1].group == "pretrained");
  CHECK(runs[1].experiment == dir / "exp" / "emd.yaml");
  CHECK(runs[1].folder == fs::path("out") / "pretrained-seed1");
  CHECK(texts(runs[1].overrides) == std::vector<std::string>{"model.pretrained=m", "train.epochs=2", "device=cpu",
                                                             "seed=1", "name=pretrained-seed1"});
  CHECK(runs[1].overrides[0].origin.line == 3);
  // The entry's overrides do not count as a point: listings show the seed only.
  CHECK(runs[1].point == std::vector<std::string>{"seed=1"});

  const auto swept = mtbert::load_sweep(dir.write("swept.yaml",
                                                  "experiments: [{file: e.yaml, overrides: [train.lr=3]}]\n"
                                                  "grid: {train.lr: [1, 2]}\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(swept, "r"), ContainsSubstring("swept.yaml:1: \"train.lr=3\": "));
  const auto twins = mtbert::load_sweep(dir.write("twins.yaml", "experiments: [a/emd.yaml, {file: b/x.yaml, name: emd}]\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(twins, "r"), ContainsSubstring("or give the entries a name:"));
}

TEST_CASE("expansion errors: duplicate names, overrides of swept keys", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto twins = mtbert::load_sweep(dir.write("twins.yaml", "experiments: [a/base.yaml, b/base.yaml]\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(twins, "r"), ContainsSubstring("twins.yaml:1: two runs would both be named base"));
  const auto swept = mtbert::load_sweep(dir.write("swept.yaml",
                                                  "experiments: [e.yaml]\ngrid: {train.lr: [1, 2]}\n"
                                                  "overrides: [train.lr=3]\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(swept, "r"),
                    ContainsSubstring("swept.yaml:3: \"train.lr=3\": " + (dir / "swept.yaml").string() + " varies train.lr"));
  const auto plain = mtbert::load_sweep(dir.write("plain.yaml", "experiments: [e.yaml]\nlist: [{train.lr: 1}]\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(plain, "r", {"train.lr=5"}), ContainsSubstring("command line: \"train.lr=5\""));
  const auto seeded = mtbert::load_sweep(dir.write("seeded.yaml", "experiments: [e.yaml]\nseeds: [1]\n"));
  CHECK_THROWS_WITH(mtbert::expand_sweep(seeded, "r", {"seed=4"}), ContainsSubstring("lists seeds"));
  CHECK_NOTHROW(mtbert::expand_sweep(plain, "r", {"seed=4"}));
}

TEST_CASE("sweep --only selects runs by name or by group, with wildcards, in the sweep's order", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  const auto spec = mtbert::load_sweep(
      dir.write("s.yaml", "name: t\nexperiments: [baseline.yaml, smart.yaml, pal.yaml]\nseeds: [1, 2]\n"));
  const auto runs = mtbert::expand_sweep(spec, "r");
  CHECK(names(mtbert::select_runs(runs, {}, "t")) == names(runs));
  CHECK(names(mtbert::select_runs(runs, {"smart"}, "t")) == std::vector<std::string>{"smart-seed1", "smart-seed2"});
  CHECK(names(mtbert::select_runs(runs, {"pal-seed2", "baseline-seed1"}, "t")) ==
        std::vector<std::string>{"baseline-seed1", "pal-seed2"});
  CHECK(names(mtbert::select_runs(runs, {"*-seed1"}, "t")) ==
        std::vector<std::string>{"baseline-seed1", "smart-seed1", "pal-seed1"});
  CHECK(names(mtbert::select_runs(runs, {"[bs]*", "smart*"}, "t")) ==
        std::vector<std::string>{"baseline-seed1", "baseline-seed2", "smart-seed1", "smart-seed2"});
  CHECK_THROWS_MATCHES(mtbert::select_runs(runs, {"smart", "smrt"}, "t"), mtbert::UserError,
                       Catch::Matchers::Message("--only smrt: no run of sweep t has that name (did you mean \"smart\"?) "
                                                "(mtbert sweep ... --dry-run lists them)"));
  CHECK_THROWS_WITH(mtbert::select_runs(runs, {"x*"}, "t"), ContainsSubstring("--only x*: no run of sweep t"));
}

TEST_CASE("task_defaults.<key> is one grid key for every task's value", "[sweep_expansion]") {
  mtbert::test::TempDir dir;
  fs::create_directories(dir / "exp");
  dir.write("exp/pool.yaml", "model: {pretrained: m}\ntasks:\n  sst: {train: a.csv}\n  sts: {train: b.csv}\n  para: {train: c.csv, pooling: cls}\n");
  const auto spec = mtbert::load_sweep(dir.write("s.yaml",
                                                 "experiments: [exp/pool.yaml]\n"
                                                 "grid: {task_defaults.pooling: [cls, mean]}\n"));
  const auto runs = mtbert::expand_sweep(spec, "out");
  CHECK(names(runs) == std::vector<std::string>{"pool-poolingcls", "pool-poolingmean"});
  const auto config = mtbert::load_experiment(runs[1].experiment, runs[1].overrides, {});
  CHECK(config.tasks[0].pooling == mtbert::Pooling::mean);
  CHECK(config.tasks[1].pooling == mtbert::Pooling::mean);
  CHECK(config.tasks[2].pooling == mtbert::Pooling::cls);  // a task's own value stays
}
