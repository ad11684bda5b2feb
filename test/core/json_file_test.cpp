// JSON readers: errors name the file and the byte; nesting deeper than
// limits::kJsonDepth is refused while parsing, before a value deep enough to
// overflow the stack (nlohmann's copies and dumps recurse) is ever built.
#include "core/json_file.h"

#include <nlohmann/json.hpp>

#include "core/limits.h"
#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {
std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }
}  // namespace

TEST_CASE("JSON nested deeper than the limit is refused, the limit itself parses", "[json_file]") {
  CHECK(mtbert::parse_json_text(nested(mtbert::limits::kJsonDepth), "x.json").is_array());
  CHECK_THROWS_WITH(mtbert::parse_json_text(nested(mtbert::limits::kJsonDepth + 1), "x.json"),
                    ContainsSubstring("x.json: JSON nested deeper than 64 levels"));
  CHECK_THROWS_WITH(mtbert::parse_json_text(nested(1'000'000), "deep.json"), ContainsSubstring("deep.json: JSON nested"));
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += "{\"a\": ";
  CHECK_THROWS_WITH(mtbert::parse_json_text(objects, "objects.json"), ContainsSubstring("objects.json: JSON nested"));
  CHECK_FALSE(mtbert::try_parse_json_text(nested(1'000'000)).has_value());
}

TEST_CASE("invalid JSON names the file and the byte", "[json_file]") {
  CHECK_THROWS_WITH(mtbert::parse_json_text("{\"a\": }", "c.json"), ContainsSubstring("c.json: invalid JSON at byte 7"));
  CHECK_FALSE(mtbert::try_parse_json_text("{\"a\": 1").has_value());
  CHECK(mtbert::try_parse_json_text("{\"a\": 1}")->at("a") == 1);
}

TEST_CASE("read_json_file reads a file, refusing what is not one", "[json_file]") {
  mtbert::test::TempDir dir;
  CHECK(mtbert::read_json_file(dir.write("a.json", "{\"k\": [1, 2]}"))["k"][1] == 2);
  CHECK_THROWS_WITH(mtbert::read_json_file(dir.path()), ContainsSubstring("is a directory"));
  CHECK_THROWS_WITH(mtbert::read_json_file(dir / "none.json"), ContainsSubstring("none.json: no such file"));
}

TEST_CASE("JSON text of strings that are not UTF-8 replaces their bytes instead of throwing", "[json_file]") {
  const nlohmann::json value = {{"working_directory", "/data/caf\xe9"}, {"ok", "caf\xc3\xa9"}};
  CHECK_THROWS(value.dump());  // what json_text spares the commands
  CHECK(mtbert::json_text(value) == "{\"ok\":\"caf\xc3\xa9\",\"working_directory\":\"/data/caf\xef\xbf\xbd\"}");
  CHECK(mtbert::parse_json_text(mtbert::json_text(value, 2), "x")["ok"] == "caf\xc3\xa9");
}
