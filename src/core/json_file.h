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

// JSON text (indented by `indent` spaces; -1: one line) for a file or the
// terminal. Strings that are not UTF-8 (a Latin-1 file name, a byte in an
// override) have those bytes written as U+FFFD: nlohmann's dump would throw
// instead, after a command had half done its work.
std::string json_text(const nlohmann::json& value, int indent = -1);
std::string json_text(const nlohmann::ordered_json& value, int indent = -1);  // keys in insertion order

}  // namespace mtbert
