// resolved_changes: what differs between two config.resolved.yaml texts, key
// by key, whatever the lines in between.
#include "config/resolved_diff.h"

#include "support/test_support.h"

TEST_CASE("resolved_changes finds changed, added and removed keys by their paths", "[resolved_diff]") {
  const std::string before =
      "# comment\nname: \"a\"\nseed: 1\n\ntrain:\n  lr: 0.001\n  schedule:\n    kind: \"linear\"\n  epochs: 3\n";
  const std::string after =
      "# comment\nname: \"a\"\nseed: 1\nthreads: 2\n\ntrain:\n  lr: 0.5\n  schedule:\n    kind: \"linear\"\n";
  const auto changes = mtbert::resolved_changes(before, after);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].key == "threads");
  CHECK(changes[0].before == "nothing");
  CHECK(changes[0].after == "2");
  CHECK(changes[1].key == "train.lr");
  CHECK(changes[1].before == "0.001");
  CHECK(changes[1].after == "0.5");
  CHECK(changes[2].key == "train.epochs");
  CHECK(changes[2].after == "nothing");
  CHECK(mtbert::resolved_changes(before, before).empty());
}
