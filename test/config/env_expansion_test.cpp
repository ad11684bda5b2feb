#include "config/env_expansion.h"

#include <map>

#include "core/user_error.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

std::optional<std::string> fake_env(const std::string& name) {
  static const std::map<std::string, std::string> env{{"DATA", "/data"}, {"EMPTY", ""}, {"DOLLAR", "${DATA}"}};
  const auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

}  // namespace

TEST_CASE("${VAR} and ${VAR:-default} expand as in the shell", "[env_expansion]") {
  CHECK(mtbert::expand_env("${DATA}/sst.csv", fake_env) == "/data/sst.csv");
  CHECK(mtbert::expand_env("${DATA:-x}/a ${DATA}", fake_env) == "/data/a /data");
  CHECK(mtbert::expand_env("${UNSET:-../shared/data}/a", fake_env) == "../shared/data/a");
  CHECK(mtbert::expand_env("${EMPTY:-fallback}", fake_env) == "fallback");
  CHECK(mtbert::expand_env("${EMPTY}", fake_env).empty());
  CHECK(mtbert::expand_env("${UNSET:-}", fake_env).empty());
  CHECK(mtbert::expand_env("cost $5, $HOME, $", fake_env) == "cost $5, $HOME, $");
  CHECK(mtbert::expand_env("$${DATA} $$", fake_env) == "${DATA} $");
  // One pass: a value is not expanded again.
  CHECK(mtbert::expand_env("${DOLLAR}", fake_env) == "${DATA}");
}

TEST_CASE("bad references are user errors", "[env_expansion]") {
  CHECK_THROWS_WITH(mtbert::expand_env("${UNSET}/x", fake_env),
                    ContainsSubstring("UNSET is not set") && ContainsSubstring("${UNSET:-default}"));
  CHECK_THROWS_WITH(mtbert::expand_env("${DATA", fake_env), ContainsSubstring("unterminated"));
  CHECK_THROWS_WITH(mtbert::expand_env("${1A}", fake_env), ContainsSubstring("not a variable reference"));
  CHECK_THROWS_WITH(mtbert::expand_env("${}", fake_env), ContainsSubstring("not a variable reference"));
}

TEST_CASE("every scalar of a tree expands, errors name file, line and key path", "[env_expansion]") {
  auto root = mtbert::parse_config_yaml("tasks:\n  sst:\n    train: ${DATA}/t.csv\n    list: [a, '${DATA}']\n",
                                        mtbert::ConfigOrigin{"experiments/foo.yaml", 0});
  mtbert::expand_env_in_tree(root, fake_env);
  const auto* sst = root.find("tasks")->find("sst");
  CHECK(sst->find("train")->text == "/data/t.csv");
  CHECK(sst->find("list")->items[1].text == "/data");

  auto bad = mtbert::parse_config_yaml("tasks:\n  sst:\n    dev: ${NOPE}/d.csv\n",
                                       mtbert::ConfigOrigin{"experiments/foo.yaml", 0});
  CHECK_THROWS_WITH(mtbert::expand_env_in_tree(bad, fake_env),
                    ContainsSubstring("experiments/foo.yaml:3: tasks.sst.dev: environment variable NOPE is not set"));
  auto bad_item = mtbert::parse_config_yaml("l: [a, '${NOPE}']\n", mtbert::ConfigOrigin{"f.yaml", 0});
  CHECK_THROWS_WITH(mtbert::expand_env_in_tree(bad_item, fake_env), ContainsSubstring("f.yaml:1: l[1]:"));
}
