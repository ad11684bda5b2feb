#include "config/schema_visitors.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "config/encoder_config_keys.h"
#include "config/yaml_quote.h"
#include "core/json_file.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

nlohmann::json scalar_to_json(const ConfigNode& node) {
  if (node.quoted) return node.text;
  const std::string& t = node.text;
  if (t == "true" || t == "True" || t == "TRUE") return true;
  if (t == "false" || t == "False" || t == "FALSE") return false;
  const std::string_view digits = !t.empty() && t[0] == '+' ? std::string_view(t).substr(1) : std::string_view(t);
  int64_t integer = 0;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), integer);
      ec == std::errc() && end == digits.data() + digits.size() && !digits.empty())
    return integer;
  double number = 0;
  if (auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
      ec == std::errc() && end == digits.data() + digits.size() && !digits.empty() && std::isfinite(number))
    return number;
  return t;
}

std::string quote(const std::string& s) { return yaml_double_quoted(s, Dollars::escape); }

}  // namespace

bool is_config_word(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

nlohmann::json config_node_to_json(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return nullptr;
    case ConfigNode::Kind::scalar: return scalar_to_json(node);
    case ConfigNode::Kind::sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& item : node.items) array.push_back(config_node_to_json(item));
      return array;
    }
    case ConfigNode::Kind::map: break;
  }
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : node.entries) object[key] = config_node_to_json(value);
  return object;
}

void SchemaReader::task_defaults(std::string_view name) {
  ConfigReader defaults = r_.section(name);
  for (const char* own : {"type", "train", "dev", "test"})
    defaults.check(!defaults.has(own), own,
                   fmt::format("each task has its own {}: set it under tasks.<task>, not as a default", own));
  SchemaReader reader(defaults);
  describe(reader, task_defaults_);
  reader.r_.finish();
}

void SchemaReader::tasks(std::string_view name, std::vector<TaskConfig>& tasks) {
  ConfigReader all = r_.section(name);
  for (const auto& task_name : all.keys()) {
    TaskConfig t = task_defaults_;
    t.name = t.type = task_name;
    SchemaReader task(all.section(task_name));
    describe(task, t);
    task.r_.finish();
    tasks.push_back(std::move(t));
  }
}

void SchemaReader::read(std::string_view name, nlohmann::json& value) { value = read_encoder_config(r_, name); }

void SchemaReader::check(std::string_view name, const std::vector<std::string>& values, Words) const {
  for (const auto& word : values)
    r_.check(is_config_word(word), name,
             fmt::format("\"{}\" is not a tag: a tag is a word of letters, digits, _ and -", word));
}

void SchemaWriter::tasks(std::string_view name, std::vector<TaskConfig>& tasks) {
  text_ += "\n";
  line(fmt::format("{}:", name));
  ++depth_;
  for (auto& task : tasks) {
    line(fmt::format("{}:", task.name));
    ++depth_;
    describe(*this, task);
    --depth_;
  }
  --depth_;
}

std::string SchemaWriter::text(const std::string& value) { return quote(value); }

std::string SchemaWriter::text(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const auto& v : values) quoted.push_back(quote(v));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

std::string SchemaWriter::text(const nlohmann::json& j) {
  if (j.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [key, value] : j.items()) parts.push_back(quote(key) + ": " + text(value));
    return fmt::format("{{{}}}", fmt::join(parts, ", "));
  }
  if (j.is_array()) {
    std::vector<std::string> parts;
    for (const auto& value : j) parts.push_back(text(value));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }
  if (j.is_string()) return quote(j.get<std::string>());
  return json_text(j);  // numbers (shortest exact form), true/false, null
}

}  // namespace mtbert
