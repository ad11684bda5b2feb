#include "core/did_you_mean.h"

#include "support/test_support.h"

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps", "[did_you_mean]") {
  CHECK(mtbert::edit_distance("", "") == 0);
  CHECK(mtbert::edit_distance("abc", "") == 3);
  CHECK(mtbert::edit_distance("cosin", "cosine") == 1);
  CHECK(mtbert::edit_distance("kitten", "sitting") == 3);
  CHECK(mtbert::edit_distance("lr", "rl") == 1);
  CHECK(mtbert::edit_distance("epcohs", "epochs") == 1);
  CHECK(mtbert::edit_distance("batchsize", "batch_size") == 1);
}

TEST_CASE("suggestions are the closest likely typo, ignoring case", "[did_you_mean]") {
  const std::vector<std::string> kinds{"constant", "linear", "cosine"};
  CHECK(mtbert::did_you_mean("cosin", kinds) == "cosine");
  CHECK(mtbert::did_you_mean("Linear", kinds) == "linear");
  CHECK(mtbert::did_you_mean("step", kinds) == std::nullopt);
  CHECK(mtbert::did_you_mean_suffix("cosin", kinds) == " (did you mean \"cosine\"?)");
  CHECK(mtbert::did_you_mean_suffix("step", kinds).empty());
  const std::vector<std::string> keys{"epochs", "max_steps", "batch_size", "lr", "head_lr"};
  CHECK(mtbert::did_you_mean("lrr", keys) == "lr");
  CHECK(mtbert::did_you_mean("learning_rate", keys) == std::nullopt);
  CHECK(mtbert::did_you_mean("headlr", keys) == "head_lr");
  CHECK(mtbert::did_you_mean("x", {}) == std::nullopt);
}
