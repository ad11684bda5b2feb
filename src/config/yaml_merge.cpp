#include "config/yaml_merge.h"

namespace mtbert {

void merge_config(ConfigNode& base, const ConfigNode& overlay) {
  if (!overlay.is_map()) {
    base = overlay;
    return;
  }
  if (!base.is_map()) base = ConfigNode::make_map(overlay.origin);
  for (const auto& [key, value] : overlay.entries) {
    if (value.kind == ConfigNode::Kind::null) {
      base.erase(key);
    } else if (ConfigNode* existing = base.find(key); existing && existing->is_map() && value.is_map()) {
      merge_config(*existing, value);
    } else {
      // Merging into an empty value also drops the nulls inside a new map.
      ConfigNode replacement;
      merge_config(replacement, value);
      base.set(key, std::move(replacement));
    }
  }
}

}  // namespace mtbert
