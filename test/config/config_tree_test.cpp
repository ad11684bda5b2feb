#include "config/config_tree.h"

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("YAML becomes a tree that remembers file and line", "[config_tree]") {
  const auto root = mtbert::parse_config_yaml(
      "a: 1\nb:\n  c: \"quoted\"\n  d: [x, 'y']\ne:\nf: ~\ng: null\n", mtbert::ConfigOrigin{"f.yaml", 0});
  REQUIRE(root.is_map());
  REQUIRE(root.entries.size() == 5);
  CHECK(root.entries[0].first == "a");
  CHECK(root.find("a")->text == "1");
  CHECK_FALSE(root.find("a")->quoted);
  CHECK(root.find("a")->origin.describe() == "f.yaml:1");
  const auto* b = root.find("b");
  REQUIRE(b->is_map());
  CHECK(b->origin.line == 2);  // the key's line, not the first nested key's
  CHECK(b->find("c")->quoted);
  CHECK(b->find("c")->origin.line == 3);
  const auto* d = b->find("d");
  REQUIRE(d->kind == mtbert::ConfigNode::Kind::sequence);
  CHECK(d->items.size() == 2);
  CHECK_FALSE(d->items[0].quoted);
  CHECK(d->items[1].quoted);
  for (const char* key : {"e", "f", "g"}) CHECK(root.find(key)->kind == mtbert::ConfigNode::Kind::null);
  CHECK(root.find("h") == nullptr);
  CHECK(mtbert::describe_value(*b) == "a map");
  CHECK(mtbert::describe_value(*d) == "a list");
  CHECK(mtbert::describe_value(*root.find("a")) == "'1'");
}

TEST_CASE("set keeps a key's place, erase removes it", "[config_tree]") {
  auto root = mtbert::parse_config_yaml("a: 1\nb: 2\n", mtbert::ConfigOrigin{"f.yaml", 0});
  root.set("a", mtbert::ConfigNode::make_scalar("3", mtbert::ConfigOrigin{"g.yaml", 4}));
  root.set("c", mtbert::ConfigNode::make_scalar("5", mtbert::ConfigOrigin{"g.yaml", 5}));
  CHECK(root.entries[0].first == "a");
  CHECK(root.entries[0].second.text == "3");
  CHECK(root.entries[2].first == "c");
  root.erase("b");
  root.erase("zzz");
  CHECK(root.entries.size() == 2);
  CHECK(root.find("b") == nullptr);
}

TEST_CASE("bad YAML is a user error naming file and line", "[config_tree]") {
  const mtbert::ConfigOrigin origin{"experiments/x.yaml", 0};
  CHECK_THROWS_WITH(mtbert::parse_config_yaml("a: 1\nb: [1, 2\n", origin),
                    ContainsSubstring("experiments/x.yaml:") && ContainsSubstring("invalid YAML"));
  CHECK_THROWS_WITH(mtbert::parse_config_yaml("a: 1\nb: 2\na: 3\n", origin),
                    ContainsSubstring("experiments/x.yaml:3") && ContainsSubstring("\"a\" appears twice"));
  CHECK_THROWS_WITH(mtbert::parse_config_yaml("? [a, b]\n: 1\n", origin),
                    ContainsSubstring("experiments/x.yaml:1") && ContainsSubstring("a key must be a plain name"));
  CHECK_THROWS_AS(mtbert::parse_config_yaml("a: 1\na: 2\n", origin), mtbert::UserError);
}

TEST_CASE("read_config_file names a missing file", "[config_tree]") {
  const mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(mtbert::read_config_file(dir / "absent.yaml"), ContainsSubstring("absent.yaml: no such file"));
  dir.write("x.yaml", "k: v\n");
  const auto root = mtbert::read_config_file(dir / "x.yaml");
  CHECK(root.find("k")->origin.describe() == (dir / "x.yaml").string() + ":1");
  CHECK(mtbert::read_config_file(dir.write("empty.yaml", "")).kind == mtbert::ConfigNode::Kind::null);
}

TEST_CASE("YAML aliases may not expand beyond the value limit, nesting is bounded", "[config_tree]") {
  // 10 aliases of 10 aliases ... six levels deep: 10^6 values once expanded.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'f'; ++level) {
    const char prev = static_cast<char>(level - 1);
    bomb += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", " : "") + "*" + prev;
    bomb += "]\n";
  }
  CHECK_THROWS_WITH(mtbert::parse_config_yaml(bomb, mtbert::ConfigOrigin{"bomb.yaml", 0}),
                    ContainsSubstring("bomb.yaml: more than 100000 values once aliases (*name) are expanded"));
  // A benign alias still expands.
  const auto root = mtbert::parse_config_yaml("a: &x {lr: 1}\nb: *x\n", mtbert::ConfigOrigin{"ok.yaml", 0});
  CHECK(root.find("b")->find("lr")->text == "1");

  std::string deep = "a: ";
  for (int i = 0; i < 40; ++i) deep += "[";
  for (int i = 0; i < 40; ++i) deep += "]";
  CHECK_THROWS_WITH(mtbert::parse_config_yaml(deep, mtbert::ConfigOrigin{"deep.yaml", 0}),
                    ContainsSubstring("values nested more than 32 levels deep"));
  const std::string very_deep = "a: " + std::string(5000, '[') + std::string(5000, ']');
  CHECK_THROWS_WITH(mtbert::parse_config_yaml(very_deep, mtbert::ConfigOrigin{"deeper.yaml", 0}),
                    ContainsSubstring("values nested more than 32 levels deep"));
}

TEST_CASE("a config file that is not a file says what it is", "[config_tree]") {
  const mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(mtbert::read_config_file(dir.path()), ContainsSubstring(": is a directory, not a file"));
  CHECK_THROWS_WITH(mtbert::read_config_file(dir / "none.yaml"), ContainsSubstring("none.yaml: no such file"));
}
