#include "config/config_extends.h"

#include <fmt/format.h>

#include "config/yaml_merge.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

struct Link {
  std::filesystem::path canonical;
  std::string display;
};

std::vector<const ConfigNode*> extends_entries(const ConfigNode& extends) {
  if (extends.is_map())
    throw UserError(fmt::format("{}: extends: expected a file path or a list of them, got a map",
                                extends.origin.describe()));
  std::vector<const ConfigNode*> entries;
  if (extends.kind == ConfigNode::Kind::scalar) entries.push_back(&extends);
  if (extends.kind == ConfigNode::Kind::sequence)
    for (const auto& item : extends.items) entries.push_back(&item);
  for (const ConfigNode* entry : entries) {
    if (entry->kind != ConfigNode::Kind::scalar || entry->text.empty())
      throw UserError(fmt::format("{}: extends: expected a file path or a list of them, got {}",
                                  entry->origin.describe(), describe_value(*entry)));
  }
  return entries;
}

ConfigNode load(const std::filesystem::path& path, std::vector<Link>& chain, const ConfigOrigin& cited_at) {
  const auto canonical = std::filesystem::weakly_canonical(path);
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i].canonical != canonical) continue;
    std::string cycle;
    for (size_t j = i; j < chain.size(); ++j) cycle += chain[j].display + " -> ";
    throw UserError(fmt::format("{}: extends: cycle {}{}: remove one of these extends", cited_at.describe(), cycle,
                                path.string()));
  }
  if (!chain.empty() && !std::filesystem::is_regular_file(path))
    throw UserError(fmt::format("{}: extends: {} does not exist", cited_at.describe(), path.string()));

  ConfigNode document = read_config_file(path);
  if (document.kind == ConfigNode::Kind::null) document = ConfigNode::make_map(ConfigOrigin{path.string(), 0});
  if (!document.is_map())
    throw UserError(fmt::format("{}: expected a map of keys (name: value) at the top level, got {}",
                                path.string(), describe_value(document)));

  ConfigNode merged = ConfigNode::make_map(ConfigOrigin{path.string(), 0});
  if (const ConfigNode* extends = document.find("extends")) {
    chain.push_back(Link{canonical, path.string()});
    for (const ConfigNode* entry : extends_entries(*extends)) {
      std::filesystem::path target = entry->text;
      if (target.is_relative()) target = (path.parent_path() / target).lexically_normal();
      merge_config(merged, load(target, chain, entry->origin));
    }
    chain.pop_back();
    document.erase("extends");
  }
  merged.erase("name");
  merged.erase("output_dir");
  merge_config(merged, document);
  return merged;
}

}  // namespace

ConfigNode load_config_with_extends(const std::filesystem::path& path) {
  std::vector<Link> chain;
  return load(path, chain, ConfigOrigin{path.string(), 0});
}

}  // namespace mtbert
