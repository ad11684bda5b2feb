#pragma once
// Environment variables in config values, as in the shell: `${VAR}` and
// `${VAR:-default}` (the default also when VAR is set but empty); `$$` is a
// literal `$`; a `$` before anything else is kept as it is. One pass: the
// values of variables are not expanded again.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_tree.h"

namespace mtbert {

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process environment.
std::optional<std::string> process_env(const std::string& name);

// Throws UserError (without a location: callers add it) for an unset variable
// without a default, an unterminated `${` or a bad variable name.
std::string expand_env(std::string_view text, const EnvLookup& lookup = process_env);

// Expands every scalar of the tree (keys are left alone); errors name the
// value's origin and key path.
void expand_env_in_tree(ConfigNode& root, const EnvLookup& lookup = process_env);

}  // namespace mtbert
