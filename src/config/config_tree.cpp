#include "config/config_tree.h"

#include <fstream>
#include <string_view>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "core/input_file.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

std::string ConfigOrigin::describe() const {
  return line > 0 ? fmt::format("{}:{}", file, line) : file;
}

ConfigNode ConfigNode::make_map(ConfigOrigin origin) {
  ConfigNode node;
  node.kind = Kind::map;
  node.origin = std::move(origin);
  return node;
}

ConfigNode ConfigNode::make_scalar(std::string text, ConfigOrigin origin) {
  ConfigNode node;
  node.kind = Kind::scalar;
  node.text = std::move(text);
  node.origin = std::move(origin);
  return node;
}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode* ConfigNode::find(std::string_view key) {
  for (auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode& ConfigNode::set(const std::string& key, ConfigNode value) {
  if (ConfigNode* existing = find(key)) return *existing = std::move(value);
  return entries.emplace_back(key, std::move(value)).second;
}

void ConfigNode::erase(std::string_view key) {
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->first == key) {
      entries.erase(it);
      return;
    }
  }
}

std::string describe_value(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return "an empty value";
    case ConfigNode::Kind::sequence: return "a list";
    case ConfigNode::Kind::map: return "a map";
    case ConfigNode::Kind::scalar: break;
  }
  return fmt::format("'{}'", node.text);
}

namespace {

ConfigOrigin at(const ConfigOrigin& file, const YAML::Node& node) {
  return ConfigOrigin{file.file, node.Mark().is_null() ? file.line : node.Mark().line + 1};
}

// What one document may expand to: aliases (*name) share yaml-cpp's nodes,
// but each becomes a copy here, so a few lines of aliases of aliases would
// otherwise grow into billions of values.
struct Budget {
  int64_t values_left = limits::kConfigValues;
};

ConfigNode convert(const YAML::Node& yaml, const ConfigOrigin& file, Budget& budget, int depth) {
  ConfigNode node;
  node.origin = at(file, yaml);
  if (--budget.values_left < 0)
    throw UserError(fmt::format("{}: more than {} values once aliases (*name) are expanded; a config needs far fewer",
                                file.describe(), limits::kConfigValues));
  if (depth > limits::kConfigDepth)
    throw UserError(fmt::format("{}: values nested more than {} levels deep", node.origin.describe(),
                                limits::kConfigDepth));
  switch (yaml.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      break;
    case YAML::NodeType::Scalar:
      node.kind = ConfigNode::Kind::scalar;
      node.text = yaml.Scalar();
      // "?" is a plain scalar; "!" a quoted one; anything else an explicit tag.
      node.quoted = yaml.Tag() != "?";
      break;
    case YAML::NodeType::Sequence:
      node.kind = ConfigNode::Kind::sequence;
      for (const auto& item : yaml) node.items.push_back(convert(item, file, budget, depth + 1));
      break;
    case YAML::NodeType::Map:
      node.kind = ConfigNode::Kind::map;
      for (const auto& entry : yaml) {
        if (!entry.first.IsScalar())
          throw UserError(fmt::format("{}: a key must be a plain name, not {}", at(file, entry.first).describe(),
                                      entry.first.IsMap() ? "a map" : "a list"));
        const std::string key = entry.first.Scalar();
        if (node.find(key))
          throw UserError(fmt::format("{}: key \"{}\" appears twice in the same map: keep one",
                                      at(file, entry.first).describe(), key));
        // A value is reported at its key's line (a block map or list starts
        // on the next one).
        ConfigNode value = convert(entry.second, file, budget, depth + 1);
        value.origin = at(file, entry.first);
        node.entries.emplace_back(key, std::move(value));
      }
      break;
  }
  return node;
}

}  // namespace

ConfigNode parse_config_yaml(const std::string& text, const ConfigOrigin& origin) {
  YAML::Node yaml;
  try {
    yaml = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    const ConfigOrigin where{origin.file, e.mark.is_null() ? origin.line : e.mark.line + 1};
    throw UserError(fmt::format("{}: values nested more than {} levels deep", where.describe(), limits::kConfigDepth));
  } catch (const YAML::Exception& e) {
    const ConfigOrigin where{origin.file, e.mark.is_null() ? origin.line : e.mark.line + 1};
    throw UserError(fmt::format("{}: invalid YAML: {}", where.describe(), e.msg));
  }
  Budget budget;
  return convert(yaml, origin, budget, 0);
}

namespace {

// A config saved as UTF-16 or UTF-32 (some editors' "Unicode") would read as
// something else than it says, or as nothing: named for what it is.
void check_utf8_config(const std::string& text, const std::filesystem::path& path) {
  const auto starts = [&](std::string_view bytes) { return text.compare(0, bytes.size(), bytes) == 0; };
  using namespace std::string_view_literals;
  std::string encoding;
  if (starts("\xFF\xFE\0\0"sv) || starts("\0\0\xFE\xFF"sv)) encoding = "UTF-32 text (it starts with a byte order mark)";
  else if (starts("\xFF\xFE"sv) || starts("\xFE\xFF"sv)) encoding = "UTF-16 text (it starts with a byte order mark)";
  else if (text.find('\0') != std::string::npos) encoding = "not UTF-8 text: it holds NUL bytes (UTF-16 or UTF-32?)";
  if (!encoding.empty())
    throw UserError(fmt::format("{}: the config file is {}; save it as UTF-8", path.string(), encoding));
}

}  // namespace

ConfigNode read_config_file(const std::filesystem::path& path) {
  const std::string text = read_input_file(path, limits::kConfigFileBytes, "config file");
  check_utf8_config(text, path);
  return parse_config_yaml(text, ConfigOrigin{path.string(), 0});
}

ConfigNode read_config_map_file(const std::filesystem::path& path, std::string_view what, std::string_view shape) {
  if (!std::filesystem::is_regular_file(path))
    throw UserError(fmt::format("{}: the {} file does not exist", path.string(), what));
  ConfigNode root = read_config_file(path);
  if (!root.is_map())
    throw UserError(fmt::format("{}: expected a {} ({}), got {}", path.string(), what, shape, describe_value(root)));
  return root;
}

}  // namespace mtbert
