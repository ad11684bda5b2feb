#include "config/config_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/did_you_mean.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

template <typename T>
bool parse_number(std::string_view text, T& out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ConfigReader::ConfigReader(const ConfigNode* map, std::string path, ConfigOrigin origin)
    : map_(map), path_(std::move(path)), origin_(map ? map->origin : std::move(origin)) {}

std::string ConfigReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

bool ConfigReader::has(std::string_view key) const { return map_ && map_->find(key); }

std::vector<std::string> ConfigReader::keys() const {
  std::vector<std::string> keys;
  if (map_)
    for (const auto& entry : map_->entries) keys.push_back(entry.first);
  return keys;
}

const ConfigOrigin& ConfigReader::origin(std::string_view key) const {
  const ConfigNode* node = map_ ? map_->find(key) : nullptr;
  return node ? node->origin : origin_;
}

void ConfigReader::fail(std::string_view key, const std::string& message) const {
  throw UserError(fmt::format("{}: {}: {}", origin(key).describe(), key_path(key), message));
}

const ConfigNode* ConfigReader::raw(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
  return map_ ? map_->find(key) : nullptr;
}

const ConfigNode* ConfigReader::scalar(std::string_view key, const char* expected) {
  const ConfigNode* node = raw(key);
  if (node && node->kind != ConfigNode::Kind::scalar)
    fail(key, fmt::format("expected {}, got {}", expected, describe_value(*node)));
  return node;
}

void ConfigReader::read(std::string_view key, std::string& value) {
  if (const ConfigNode* node = scalar(key, "a string")) value = node->text;
}

void ConfigReader::read(std::string_view key, bool& value) {
  const ConfigNode* node = scalar(key, "true or false");
  if (!node) return;
  const std::string text = lowercase(node->text);
  if (text != "true" && text != "false") fail(key, fmt::format("expected true or false, got '{}'", node->text));
  value = text == "true";
}

void ConfigReader::read(std::string_view key, int64_t& value) {
  const ConfigNode* node = scalar(key, "an integer");
  if (node && !parse_number(node->text, value)) fail(key, fmt::format("expected an integer, got '{}'", node->text));
}

void ConfigReader::read(std::string_view key, uint64_t& value) {
  const ConfigNode* node = scalar(key, "a non-negative integer");
  if (node && (node->text.rfind('-', 0) == 0 || !parse_number(node->text, value)))
    fail(key, fmt::format("expected a non-negative integer, got '{}'", node->text));
}

void ConfigReader::read(std::string_view key, double& value) {
  const ConfigNode* node = scalar(key, "a number");
  if (node && (!parse_number(node->text, value) || !std::isfinite(value)))
    fail(key, fmt::format("expected a number, got '{}'", node->text));
}

void ConfigReader::read(std::string_view key, std::vector<std::string>& value) {
  const ConfigNode* node = raw(key);
  if (!node) return;
  if (node->kind == ConfigNode::Kind::scalar) {
    value = {node->text};
    return;
  }
  if (node->kind != ConfigNode::Kind::sequence)
    fail(key, fmt::format("expected a list of strings, got {}", describe_value(*node)));
  std::vector<std::string> items;
  for (size_t i = 0; i < node->items.size(); ++i) {
    const ConfigNode& item = node->items[i];
    if (item.kind != ConfigNode::Kind::scalar)
      throw UserError(fmt::format("{}: {}[{}]: expected a string, got {}", item.origin.describe(), key_path(key), i,
                                  describe_value(item)));
    items.push_back(item.text);
  }
  value = std::move(items);
}

void ConfigReader::check_choice(std::string_view key, const std::string& value,
                                const std::vector<std::string>& choices) const {
  check(std::find(choices.begin(), choices.end(), value) != choices.end(), key,
        fmt::format("\"{}\" is not one of {}{}", value, fmt::join(choices, ", "), did_you_mean_suffix(value, choices)));
}

ConfigReader ConfigReader::section(std::string_view key) {
  const ConfigNode* node = raw(key);
  if (node && !node->is_map())
    fail(key, fmt::format("expected a section of keys (key: value), got {}", describe_value(*node)));
  return ConfigReader(node, key_path(key), origin_);
}

void ConfigReader::finish(const std::vector<std::string>& also_valid) const {
  if (!map_) return;
  std::vector<std::string> valid = known_;
  valid.insert(valid.end(), also_valid.begin(), also_valid.end());
  for (const auto& [key, value] : map_->entries) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string suggestion = did_you_mean_suffix(key, valid);
    throw UserError(fmt::format("{}: {}: unknown key{}", value.origin.describe(), key_path(key),
                                suggestion.empty() ? fmt::format("; the keys here are {}", fmt::join(valid, ", "))
                                                   : suggestion));
  }
}

}  // namespace mtbert
