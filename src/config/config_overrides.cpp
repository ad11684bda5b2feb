#include "config/config_overrides.h"

#include <fmt/format.h>

#include "config/yaml_merge.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

void stamp(ConfigNode& node, const ConfigOrigin& origin) {
  node.origin = origin;
  for (auto& item : node.items) stamp(item, origin);
  for (auto& [key, value] : node.entries) stamp(value, origin);
}

std::vector<std::string> split_key_path(const std::string& path, const ConfigOverride& override_) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (keys.back().empty())
      throw UserError(fmt::format("{}: \"{}\": the key path has an empty part; write key.path=value, e.g. "
                                  "train.lr=2e-5",
                                  override_.origin.describe(), override_.text));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

void apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides) {
  std::vector<ConfigOverride> from_command_line;
  for (const auto& text : overrides) from_command_line.push_back(ConfigOverride{text});
  apply_overrides(root, from_command_line);
}

void apply_overrides(ConfigNode& root, const std::vector<ConfigOverride>& overrides) {
  for (const auto& override_ : overrides) {
    const std::string& text = override_.text;
    const ConfigOrigin& origin = override_.origin;
    const std::string where = origin.describe();
    const size_t eq = text.find('=');
    if (eq == std::string::npos)
      throw UserError(fmt::format("{}: \"{}\" is not an override: write key.path=value, e.g. train.lr=2e-5",
                                  where, text));
    const auto keys = split_key_path(text.substr(0, eq), override_);
    if (keys.front() == "extends")
      throw UserError(fmt::format("{}: \"{}\": extends works in files only: write a file that extends both",
                                  where, text));
    // An empty value is most often a shell variable that was not set: it
    // would delete the key and leave its default in place without a word.
    if (text.find_first_not_of(" \t", eq + 1) == std::string::npos)
      throw UserError(fmt::format("{}: \"{}\": the value is empty (an unset shell variable?); give a value, "
                                  "{}=null to delete the key, or {}='\"\"' for an empty string",
                                  where, text, text.substr(0, eq), text.substr(0, eq)));

    ConfigNode value;
    try {
      value = parse_config_yaml(text.substr(eq + 1), origin);
    } catch (const UserError&) {
      throw UserError(fmt::format("{}: \"{}\": the value is not valid YAML (quote it if it is a string: "
                                  "key='\"...\"')",
                                  where, text));
    }
    stamp(value, origin);

    // Walk to the parent map of the last key, creating maps on the way (but
    // not to delete a key that is not there).
    const bool deletes = value.kind == ConfigNode::Kind::null;
    ConfigNode* parent = &root;
    std::string walked;
    for (size_t i = 0; parent && i + 1 < keys.size(); ++i) {
      walked += (i ? "." : "") + keys[i];
      ConfigNode* child = parent->find(keys[i]);
      if (!child && !deletes) child = &parent->set(keys[i], ConfigNode::make_map(origin));
      if (child && !child->is_map())
        throw UserError(fmt::format("{}: \"{}\": {} is a value, not a section with keys", where, text, walked));
      parent = child;
    }
    if (!parent) continue;
    ConfigNode single = ConfigNode::make_map(origin);
    single.set(keys.back(), std::move(value));
    merge_config(*parent, single);
  }
}

}  // namespace mtbert
