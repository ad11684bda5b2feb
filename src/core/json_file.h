#pragma once
// JSON files a user hands us (config.json, tokenizer_config.json): parse
// errors name the file, and typed lookups name the key and the expected type.
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace mtbert {

nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace mtbert
