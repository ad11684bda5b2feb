#include "train/config_overrides.h"

#include <fmt/format.h>

#include "core/user_error.h"
#include "train/yaml_merge.h"

namespace mtbert {

namespace {

void stamp(ConfigNode& node, const ConfigOrigin& origin) {
  node.origin = origin;
  for (auto& item : node.items) stamp(item, origin);
  for (auto& [key, value] : node.entries) stamp(value, origin);
}

std::vector<std::string> split_key_path(const std::string& path, const std::string& override_text) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (keys.back().empty())
      throw UserError(fmt::format("{}: \"{}\": the key path has an empty part; write key.path=value, e.g. "
                                  "train.lr=2e-5",
                                  kCommandLine, override_text));
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

void apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides) {
  const ConfigOrigin origin{kCommandLine, 0};
  for (const auto& text : overrides) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos)
      throw UserError(fmt::format("{}: \"{}\" is not an override: write key.path=value, e.g. train.lr=2e-5",
                                  kCommandLine, text));
    const auto keys = split_key_path(text.substr(0, eq), text);
    if (keys.front() == "extends")
      throw UserError(fmt::format("{}: \"{}\": extends works in files only: write a file that extends both",
                                  kCommandLine, text));

    ConfigNode value;
    try {
      value = parse_config_yaml(text.substr(eq + 1), origin);
    } catch (const UserError&) {
      throw UserError(fmt::format("{}: \"{}\": the value is not valid YAML (quote it if it is a string: "
                                  "key='\"...\"')",
                                  kCommandLine, text));
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
        throw UserError(fmt::format("{}: \"{}\": {} is a value, not a section with keys", kCommandLine, text, walked));
      parent = child;
    }
    if (!parent) continue;
    ConfigNode single = ConfigNode::make_map(origin);
    single.set(keys.back(), std::move(value));
    merge_config(*parent, single);
  }
}

}  // namespace mtbert
