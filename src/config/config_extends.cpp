#include "config/config_extends.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "config/yaml_merge.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

struct Link {
  std::filesystem::path canonical;
  std::string display;
};

// One load_config_with_extends: the chain of files being read (for cycles),
// and each file's merged result once read. A file extended from several
// places (a diamond) is read and merged once: without that, a chain where
// every file extends the next one twice is read 2^depth times.
struct Loader {
  std::vector<Link> chain;
  std::map<std::filesystem::path, ConfigNode> done;
  std::set<std::filesystem::path> seen;  // every file started, done or not
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

ConfigNode load(const std::filesystem::path& path, Loader& loader, const ConfigOrigin& cited_at) {
  std::vector<Link>& chain = loader.chain;
  const auto canonical = std::filesystem::weakly_canonical(path);
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i].canonical != canonical) continue;
    std::string cycle;
    for (size_t j = i; j < chain.size(); ++j) cycle += chain[j].display + " -> ";
    throw UserError(fmt::format("{}: extends: cycle {}{}: remove one of these extends", cited_at.describe(), cycle,
                                path.string()));
  }
  if (const auto it = loader.done.find(canonical); it != loader.done.end()) return it->second;
  if (loader.seen.insert(canonical).second && loader.seen.size() > static_cast<size_t>(limits::kExtendsFiles))
    throw UserError(fmt::format("{}: extends: more than {} different files in one experiment's extends; flatten some "
                                "of them",
                                cited_at.describe(), limits::kExtendsFiles));
  std::error_code ec;
  if (!chain.empty() && !std::filesystem::exists(path, ec))
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
      merge_config(merged, load(target, loader, entry->origin));
    }
    chain.pop_back();
    document.erase("extends");
  }
  merged.erase("name");
  merged.erase("output_dir");
  merge_config(merged, document);
  loader.done.emplace(canonical, merged);
  return merged;
}

}  // namespace

ConfigNode load_config_with_extends(const std::filesystem::path& path) {
  Loader loader;
  return load(path, loader, ConfigOrigin{path.string(), 0});
}

}  // namespace mtbert
