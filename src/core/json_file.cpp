#include "core/json_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

struct TooDeep {};

// Refuses a value deeper than the limit when the parser opens it, before it
// is built.
bool depth_guard(int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
  if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
      depth >= limits::kJsonDepth)
    throw TooDeep{};
  return true;
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text.begin(), text.end(), depth_guard);
  } catch (const TooDeep&) {
    throw UserError(fmt::format("{}: JSON nested deeper than {} levels; is this the right file?", where,
                                limits::kJsonDepth));
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset where parsing stopped; the message after the
    // "[json.exception.parse_error.101] parse error at line 1, column 2:" prefix says why.
    const std::string what = e.what();
    throw UserError(fmt::format("{}: invalid JSON at byte {}: {}", where, e.byte, what.substr(what.find(':') + 2)));
  } catch (const nlohmann::json::exception& e) {
    // A number beyond double's range ("[json.exception.out_of_range.406]
    // number overflow parsing '1e999'").
    const std::string what = e.what();
    throw UserError(fmt::format("{}: invalid JSON: {}", where, what.substr(what.find("] ") + 2)));
  }
}

std::optional<nlohmann::json> try_parse_json_text(std::string_view text) {
  try {
    return nlohmann::json::parse(text.begin(), text.end(), depth_guard);
  } catch (const TooDeep&) {
    return std::nullopt;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_input_file(path, limits::kJsonFileBytes, "JSON file"), path.string());
}

std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string json_text(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace mtbert
