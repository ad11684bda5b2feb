// model.config's keys in the schema: the keys the encoder reads, each with
// its meaning, and each read by models/model_config.h under that name.
#include "config/encoder_config_keys.h"

#include <nlohmann/json.hpp>

#include "core/user_error.h"
#include "models/model_config.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("model.config documents each key the encoder reads", "[encoder_config_keys]") {
  const auto& keys = mtbert::encoder_config_keys();
  const auto& read = mtbert::model_config_keys();
  REQUIRE(keys.size() == read.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO(keys[i].name);
    CHECK(keys[i].name == read[i]);
    CHECK(std::string(keys[i].doc).size() > 10);
    // A value of no type the key takes (an object) is refused by the encoder's
    // reader, naming the key: the encoder reads it under this name.
    const nlohmann::json wrong = {{keys[i].name, nlohmann::json::object()}};
    CHECK_THROWS_WITH(mtbert::model_config_from_json(wrong, "model.config"), ContainsSubstring(keys[i].name));
  }
}
