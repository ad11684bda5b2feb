#include "config/config_overrides.h"

#include "core/user_error.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

mtbert::ConfigNode parse(const std::string& text) {
  return mtbert::parse_config_yaml(text, mtbert::ConfigOrigin{"f.yaml", 0});
}

}  // namespace

TEST_CASE("overrides set scalars, lists and maps at a key path", "[config_overrides]") {
  auto root = parse("train: {lr: 1, schedule: {kind: linear, final_lr: 0}}\ntasks: {sst: {train: a}}\n");
  mtbert::apply_overrides(root, {"train.lr=2e-5", "train.schedule={kind: cosine}", "model.tokenizer.train_from=[a, b]",
                                 "tasks.sst.dropout=0.3", "tasks.new.train=x=y", "name='quoted: yes'"});
  const auto* train = root.find("train");
  CHECK(train->find("lr")->text == "2e-5");
  CHECK(train->find("lr")->origin.describe() == "command line");
  // A map merges like extends: final_lr stays.
  CHECK(train->find("schedule")->find("kind")->text == "cosine");
  CHECK(train->find("schedule")->find("final_lr")->text == "0");
  const auto* from = root.find("model")->find("tokenizer")->find("train_from");
  REQUIRE(from->items.size() == 2);
  CHECK(from->items[1].text == "b");
  CHECK(root.find("tasks")->find("sst")->find("dropout")->text == "0.3");
  CHECK(root.find("tasks")->find("sst")->find("train")->text == "a");
  CHECK(root.find("tasks")->find("new")->find("train")->text == "x=y");
  CHECK(root.find("name")->text == "quoted: yes");
  CHECK(root.find("name")->quoted);
}

TEST_CASE("a null override deletes the key, an empty one is refused", "[config_overrides]") {
  auto root = parse("tasks: {sst: {train: a}, sts: {train: b}}\nseed: 3\n");
  mtbert::apply_overrides(root, {"tasks.sts=null", "seed=~", "tasks.ghost.train=null"});
  CHECK(root.find("tasks")->find("sts") == nullptr);
  CHECK(root.find("seed") == nullptr);
  CHECK(root.find("tasks")->find("ghost") == nullptr);
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train.lr="}),
                    ContainsSubstring("\"train.lr=\": the value is empty (an unset shell variable?)"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train.lr=  "}), ContainsSubstring("the value is empty"));
  mtbert::apply_overrides(root, {"name=''"});
  CHECK(root.find("name")->text.empty());
}

TEST_CASE("malformed overrides are user errors naming the command line", "[config_overrides]") {
  auto root = parse("train: {lr: 1}\n");
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train.lr"}),
                    ContainsSubstring("command line: \"train.lr\" is not an override") && ContainsSubstring("key.path=value"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train..lr=1"}), ContainsSubstring("empty part"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"=1"}), ContainsSubstring("empty part"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train.lr.x=1"}),
                    ContainsSubstring("command line") && ContainsSubstring("train.lr is a value, not a section"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"train.lr=[1,"}),
                    ContainsSubstring("command line") && ContainsSubstring("not valid YAML"));
  CHECK_THROWS_AS(mtbert::apply_overrides(root, {"a"}), mtbert::UserError);
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, {"extends=b.yaml"}), ContainsSubstring("extends works in files only"));
}

TEST_CASE("overrides written in a file carry that file's line into values and errors", "[config_overrides]") {
  auto root = parse("train: {lr: 1}\n");
  const mtbert::ConfigOrigin sweep{"sweeps/t.yaml", 7};
  mtbert::apply_overrides(root, std::vector<mtbert::ConfigOverride>{{"train.lr=2e-5", sweep}, {"seed=3"}});
  CHECK(root.find("train")->find("lr")->origin.describe() == "sweeps/t.yaml:7");
  CHECK(root.find("seed")->origin.describe() == "command line");
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, std::vector<mtbert::ConfigOverride>{{"train.lr", sweep}}),
                    ContainsSubstring("sweeps/t.yaml:7: \"train.lr\" is not an override"));
  CHECK_THROWS_WITH(mtbert::apply_overrides(root, std::vector<mtbert::ConfigOverride>{{"train.lr.x=1", sweep}}),
                    ContainsSubstring("sweeps/t.yaml:7: \"train.lr.x=1\": train.lr is a value"));
}
