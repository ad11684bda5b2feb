#include "config/config_reader.h"

#include "core/user_error.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::Equals;

namespace {

mtbert::ConfigNode parse(const std::string& text) {
  return mtbert::parse_config_yaml(text, mtbert::ConfigOrigin{"e.yaml", 0});
}

}  // namespace

TEST_CASE("typed reads convert scalars and leave absent keys alone", "[config_reader]") {
  const auto root = parse(
      "s: hello\nb: True\ni: -12\nu: 18446744073709551615\nd: 1e-5\nd2: +.5\nl: [a, b]\nl1: one\n"
      "sec: {x: 1}\n");
  mtbert::ConfigReader r(root);
  std::string s = "default";
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0, d2 = 0, absent = 7;
  std::vector<std::string> l, l1;
  r.read("s", s);
  r.read("b", b);
  r.read("i", i);
  r.read("u", u);
  r.read("d", d);
  r.read("d2", d2);
  r.read("l", l);
  r.read("l1", l1);
  r.read("absent", absent);
  auto sec = r.section("sec");
  int64_t x = 0;
  sec.read("x", x);
  sec.finish();
  r.finish();
  CHECK(s == "hello");
  CHECK(b);
  CHECK(i == -12);
  CHECK(u == 18446744073709551615ull);
  CHECK(d == 1e-5);
  CHECK(d2 == 0.5);
  CHECK(l == std::vector<std::string>{"a", "b"});
  CHECK(l1 == std::vector<std::string>{"one"});
  CHECK(absent == 7);
  CHECK(x == 1);
  CHECK(sec.key_path("x") == "sec.x");
  CHECK(r.keys().size() == 9);
}

TEST_CASE("wrong types name origin, key path and the value", "[config_reader]") {
  const auto root = parse("train:\n  lr: fast\n  epochs: 2.5\n  seed: -1\n  on: yes\n  big: 1e999\n  m: {a: 1}\n"
                          "  l: [a, [b]]\n");
  mtbert::ConfigReader train = mtbert::ConfigReader(root).section("train");
  double lr = 0;
  int64_t epochs = 0;
  uint64_t seed = 0;
  bool on = false;
  std::string m;
  std::vector<std::string> l;
  CHECK_THROWS_WITH(train.read("lr", lr), Equals("e.yaml:2: train.lr: expected a number, got 'fast'"));
  CHECK_THROWS_WITH(train.read("epochs", epochs), Equals("e.yaml:3: train.epochs: expected an integer, got '2.5'"));
  CHECK_THROWS_WITH(train.read("seed", seed), ContainsSubstring("train.seed: expected a non-negative integer, got '-1'"));
  CHECK_THROWS_WITH(train.read("on", on), ContainsSubstring("train.on: expected true or false, got 'yes'"));
  CHECK_THROWS_WITH(train.read("big", lr), ContainsSubstring("expected a number, got '1e999'"));
  CHECK_THROWS_WITH(train.read("m", m), Equals("e.yaml:7: train.m: expected a string, got a map"));
  CHECK_THROWS_WITH(train.read("l", l), Equals("e.yaml:8: train.l[1]: expected a string, got a list"));
  CHECK_THROWS_WITH(train.section("lr"), ContainsSubstring("train.lr: expected a section of keys (key: value), got 'fast'"));
}

TEST_CASE("choices list the valid values and suggest the closest", "[config_reader]") {
  const auto root = parse("train:\n  schedule:\n    kind: cosin\n    other: step\n");
  auto schedule = mtbert::ConfigReader(root).section("train").section("schedule");
  std::string kind = "constant", other;
  schedule.read("kind", kind);
  schedule.read("other", other);
  CHECK_THROWS_WITH(schedule.check_choice("kind", kind, {"constant", "linear", "cosine"}),
                    Equals("e.yaml:3: train.schedule.kind: \"cosin\" is not one of constant, linear, cosine "
                           "(did you mean \"cosine\"?)"));
  CHECK_THROWS_WITH(schedule.check_choice("other", other, {"constant", "linear", "cosine"}),
                    Equals("e.yaml:4: train.schedule.other: \"step\" is not one of constant, linear, cosine"));
  CHECK_NOTHROW(schedule.check_choice("absent", "linear", {"constant", "linear"}));
}

TEST_CASE("keys never asked for are unknown, with a suggestion or the valid keys", "[config_reader]") {
  const auto root = parse("train:\n  lr: 1\n  epcohs: 3\n");
  auto train = mtbert::ConfigReader(root).section("train");
  double lr = 0;
  int64_t epochs = 0;
  train.read("lr", lr);
  train.read("epochs", epochs);
  CHECK_THROWS_WITH(train.finish(), Equals("e.yaml:3: train.epcohs: unknown key (did you mean \"epochs\"?)"));

  const auto other = parse("zzz: 1\n");
  mtbert::ConfigReader top(other);
  top.read("lr", lr);
  top.read("epochs", epochs);
  CHECK_THROWS_WITH(top.finish(), Equals("e.yaml:1: zzz: unknown key; the keys here are lr, epochs"));
  CHECK_THROWS_WITH(top.finish({"zz"}), Equals("e.yaml:1: zzz: unknown key (did you mean \"zz\"?)"));
}

TEST_CASE("checks fail at the value's origin, or the section's when absent", "[config_reader]") {
  const auto root = parse("a: 1\nsec:\n  b: 2\n");
  mtbert::ConfigReader r(root);
  CHECK_THROWS_WITH(r.check(false, "a", "bad"), Equals("e.yaml:1: a: bad"));
  auto sec = r.section("sec");
  CHECK_THROWS_WITH(sec.check(false, "c", "missing"), Equals("e.yaml:2: sec.c: missing"));
  CHECK_NOTHROW(sec.check(true, "c", "missing"));
  auto absent = r.section("none");
  CHECK_THROWS_WITH(absent.fail("x", "m"), Equals("e.yaml:1: none.x: m"));
}
