#pragma once
// How a YAML file that `extends:` another, and a command-line override, are
// combined with what they extend.
#include "config/config_tree.h"

namespace mtbert {

// Merges `overlay` into `base`: maps merge key by key, recursively, and keep
// their order (new keys are appended); any other value of the overlay
// (scalar, list) replaces the base's, whole; a null value deletes the key
// (which then takes its default, or drops e.g. an inherited task). Merged
// values keep the origin of the file that wrote them.
void merge_config(ConfigNode& base, const ConfigNode& overlay);

}  // namespace mtbert
