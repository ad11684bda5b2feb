#include "config/yaml_merge.h"

#include "support/test_support.h"

namespace {

mtbert::ConfigNode parse(const std::string& text, const std::string& file) {
  return mtbert::parse_config_yaml(text, mtbert::ConfigOrigin{file, 0});
}

}  // namespace

TEST_CASE("maps merge recursively, scalars and lists replace", "[yaml_merge]") {
  auto base = parse("a: 1\nm:\n  x: 1\n  y: [1, 2]\n  n: {p: 1, q: 2}\nlist: [a, b]\n", "base.yaml");
  const auto overlay = parse("m:\n  y: [3]\n  n: {q: 5, r: 6}\n  z: new\nlist: [c]\nb: 2\n", "child.yaml");
  mtbert::merge_config(base, overlay);
  CHECK(base.find("a")->text == "1");
  CHECK(base.find("a")->origin.file == "base.yaml");
  const auto* m = base.find("m");
  CHECK(m->find("x")->text == "1");
  REQUIRE(m->find("y")->items.size() == 1);
  CHECK(m->find("y")->items[0].text == "3");
  CHECK(m->find("y")->origin.file == "child.yaml");
  const auto* n = m->find("n");
  CHECK(n->find("p")->text == "1");
  CHECK(n->find("q")->text == "5");
  CHECK(n->find("r")->text == "6");
  CHECK(m->find("z")->origin.describe() == "child.yaml:4");
  CHECK(base.find("list")->items.size() == 1);
  // Order: the base's keys first, new ones appended.
  std::vector<std::string> keys;
  for (const auto& e : base.entries) keys.push_back(e.first);
  CHECK(keys == std::vector<std::string>{"a", "m", "list", "b"});
}

TEST_CASE("a null value deletes the key, also inside new maps", "[yaml_merge]") {
  auto base = parse("tasks:\n  sst: {train: a}\n  sts: {train: b}\nseed: 1\n", "base.yaml");
  mtbert::merge_config(base, parse("tasks:\n  sts: null\nseed:\nnew: {k: ~, j: 1}\nghost: null\n", "child.yaml"));
  CHECK(base.find("tasks")->find("sts") == nullptr);
  CHECK(base.find("tasks")->find("sst") != nullptr);
  CHECK(base.find("seed") == nullptr);
  CHECK(base.find("ghost") == nullptr);
  CHECK(base.find("new")->find("k") == nullptr);
  CHECK(base.find("new")->find("j")->text == "1");
}

TEST_CASE("a map replaces a scalar and a scalar a map", "[yaml_merge]") {
  auto base = parse("a: 1\nb: {c: 1}\n", "base.yaml");
  mtbert::merge_config(base, parse("a: {x: 1}\nb: 2\n", "child.yaml"));
  CHECK(base.find("a")->is_map());
  CHECK(base.find("b")->text == "2");
}
