// state.json: a round trip keeps every field, and each damaged field is one
// UserError naming the file and the key (a negative step once indexed before
// an epoch's plan and crashed the resumed run).
#include "train/train_progress.h"

#include "core/user_error.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

mtbert::TrainProgress sample() {
  mtbert::TrainProgress p;
  p.epoch = 2;
  p.step_in_epoch = 5;
  p.global_step = 17;
  p.examples_seen = 272;
  p.train_seconds = 3.5;
  p.best_step = 10;
  p.best_score = 0.7;
  p.best_epoch = 1;
  p.world_size = 2;
  p.streams["sst"] = mtbert::BatchStream::State{1, 3};
  p.interval_losses["sst"] = {1.25, 4};
  return p;
}

}  // namespace

TEST_CASE("state.json round trip", "[train_progress]") {
  const auto json = mtbert::to_json(sample());
  const auto back = mtbert::train_progress_from_json(json, "state.json");
  CHECK(mtbert::to_json(back) == json);
}

TEST_CASE("damaged state.json fields name the file and the key", "[train_progress]") {
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* message;
  };
  const std::vector<Case> cases{
      {"step_in_epoch", -5, "state.json: step_in_epoch: -5 is outside [0, "},
      {"epoch", 0, "state.json: epoch: 0 is outside [1, "},
      {"global_step", "ten", "state.json: global_step: type must be number, but is string"},
      {"world_size", 0, "state.json: world_size: 0 is outside [1, 1048576]"},
      {"train_seconds", "slow", "state.json: train_seconds: type must be number"},
      {"best_step", -7, "state.json: best_step: -7 is outside [-1, "},
  };
  for (const auto& c : cases) {
    INFO(c.key);
    auto json = mtbert::to_json(sample());
    json[c.key] = c.value;
    CHECK_THROWS_WITH(mtbert::train_progress_from_json(json, "state.json"), ContainsSubstring(c.message));
  }
  auto json = mtbert::to_json(sample());
  json["streams"]["sst"]["cursor"] = -1;
  CHECK_THROWS_WITH(mtbert::train_progress_from_json(json, "state.json"), ContainsSubstring("cursor: -1 is outside"));
  CHECK_THROWS_WITH(mtbert::train_progress_from_json(nlohmann::json::array(), "state.json"),
                    ContainsSubstring("state.json: not a JSON object"));
}
