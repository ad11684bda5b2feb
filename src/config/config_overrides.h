#pragma once
// `key.path=value` overrides from the command line, e.g. `train.lr=2e-5`,
// `tasks.sst.dropout=0.3`, `model.tokenizer.train_from=[a.txt, b.txt]`.
#include <string>
#include <vector>

#include "config/config_tree.h"

namespace mtbert {

// The origin of every overridden value.
inline const char* const kCommandLine = "command line";

// An override and where it was written: the command line, or the line of a
// file that lists overrides (a sweep), which validation errors then name.
struct ConfigOverride {
  std::string text;  // key.path=value
  ConfigOrigin origin{kCommandLine, 0};
};

// Applies the overrides in order. The value is parsed as YAML (a scalar, a
// flow list `[a, b]` or a flow map `{k: v}`); a map merges into an existing
// map as with `extends:`, anything else replaces; an empty value or `null`
// deletes the key (restoring its default). Missing intermediate maps are
// created, so unknown keys are reported later by validation, naming the
// command line. A malformed override is a UserError.
void apply_overrides(ConfigNode& root, const std::vector<ConfigOverride>& overrides);
// The same, from the command line.
void apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides);

}  // namespace mtbert
