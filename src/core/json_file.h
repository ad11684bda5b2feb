#pragma once
// JSON a user hands us (config.json, tokenizer_config.json, a run's
// summary.json and state.json, a safetensors header): parse errors name the
// file and the byte, and nesting is limited (limits::kJsonDepth) before
// anything is built, since nlohmann's copies and dumps recurse and a deep
// enough document would overflow the stack.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace mtbert {

// Parses `text`; UserError "WHERE: invalid JSON at byte N: ..." or "WHERE:
// JSON nested deeper than 64 levels ...".
nlohmann::json parse_json_text(std::string_view text, const std::string& where);

// The same, or nullopt for text that is not JSON (a line cut short).
std::optional<nlohmann::json> try_parse_json_text(std::string_view text);

// A JSON file, read whole (at most limits::kJsonFileBytes) and parsed.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace mtbert
