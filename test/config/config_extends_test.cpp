#include "config/config_extends.h"

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("extends reads a file relative to the extending one, the extending file wins", "[config_extends]") {
  const mtbert::test::TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  dir.write("base.yaml", "seed: 1\ntrain: {lr: 1, epochs: 3}\nname: base\noutput_dir: runs/base\n");
  dir.write("sub/child.yaml", "extends: ../base.yaml\ntrain: {lr: 2}\n");
  const auto root = mtbert::load_config_with_extends(dir / "sub/child.yaml");
  CHECK(root.find("extends") == nullptr);
  CHECK(root.find("seed")->text == "1");
  CHECK(root.find("seed")->origin.describe() == (dir / "base.yaml").string() + ":1");
  CHECK(root.find("train")->find("lr")->text == "2");
  CHECK(root.find("train")->find("epochs")->text == "3");
  // A run's identity is never inherited.
  CHECK(root.find("name") == nullptr);
  CHECK(root.find("output_dir") == nullptr);
  // ... but a file's own name stays.
  CHECK(mtbert::load_config_with_extends(dir / "base.yaml").find("name")->text == "base");
}

TEST_CASE("a list of extends merges depth-first, later files winning", "[config_extends]") {
  const mtbert::test::TempDir dir;
  dir.write("root.yaml", "a: root\nb: root\nc: root\nd: root\n");
  dir.write("left.yaml", "extends: root.yaml\nb: left\nc: left\n");
  dir.write("right.yaml", "extends: [root.yaml]\nc: right\n");
  dir.write("top.yaml", "extends: [left.yaml, right.yaml]\nd: top\n");
  const auto root = mtbert::load_config_with_extends(dir / "top.yaml");
  CHECK(root.find("a")->text == "root");
  // right.yaml re-reads root.yaml (a diamond, not a cycle), whose b is then
  // overwritten by right's copy of root: the later file wins, whole.
  CHECK(root.find("b")->text == "root");
  CHECK(root.find("c")->text == "right");
  CHECK(root.find("d")->text == "top");
}

TEST_CASE("extends cycles and missing files are user errors", "[config_extends]") {
  const mtbert::test::TempDir dir;
  dir.write("a.yaml", "extends: b.yaml\n");
  dir.write("b.yaml", "x: 1\nextends: [c.yaml]\n");
  dir.write("c.yaml", "extends: a.yaml\n");
  const std::string a = (dir / "a.yaml").string(), b = (dir / "b.yaml").string(), c = (dir / "c.yaml").string();
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "a.yaml"),
                    ContainsSubstring(c + ":1: extends: cycle " + a + " -> " + b + " -> " + c + " -> " + a));
  dir.write("self.yaml", "extends: self.yaml\n");
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "self.yaml"), ContainsSubstring("cycle"));

  dir.write("lost.yaml", "seed: 1\nextends: nowhere.yaml\n");
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "lost.yaml"),
                    ContainsSubstring((dir / "lost.yaml").string() + ":2: extends:") && ContainsSubstring("nowhere.yaml does not exist"));
  dir.write("bad.yaml", "extends: {a: 1}\n");
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "bad.yaml"), ContainsSubstring("expected a file path"));
  dir.write("list.yaml", "- a\n- b\n");
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "list.yaml"), ContainsSubstring("top level"));
  CHECK(mtbert::load_config_with_extends(dir.write("empty.yaml", "")).is_map());
}

TEST_CASE("a file extended from many places is read once", "[config_extends]") {
  // f0 extends f1 twice, f1 extends f2 twice, ...: 2^40 loads without
  // de-duplication, 41 with it (CTest's timeout would stop the former).
  const mtbert::test::TempDir dir;
  const int depth = 40;
  for (int i = 0; i < depth; ++i)
    dir.write("f" + std::to_string(i) + ".yaml",
              "extends: [f" + std::to_string(i + 1) + ".yaml, f" + std::to_string(i + 1) + ".yaml]\nv" +
                  std::to_string(i) + ": " + std::to_string(i) + "\n");
  dir.write("f" + std::to_string(depth) + ".yaml", "leaf: yes\n");
  const auto root = mtbert::load_config_with_extends(dir / "f0.yaml");
  CHECK(root.find("leaf")->text == "yes");
  CHECK(root.find("v39")->text == "39");
}

TEST_CASE("an extends tree of more distinct files than the limit is refused", "[config_extends]") {
  const mtbert::test::TempDir dir;
  for (int i = 0; i < 70; ++i)
    dir.write("g" + std::to_string(i) + ".yaml", "extends: g" + std::to_string(i + 1) + ".yaml\n");
  dir.write("g70.yaml", "x: 1\n");
  CHECK_THROWS_WITH(mtbert::load_config_with_extends(dir / "g0.yaml"),
                    ContainsSubstring("extends: more than 64 different files"));
}
