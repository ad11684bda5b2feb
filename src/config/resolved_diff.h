#pragma once
// Key-by-key differences between two resolved configs (config.resolved.yaml:
// block YAML indented by two spaces, one key a line, lists and maps of
// values in flow style). The sweep uses it to find a run whose config changed
// since it was trained, and --resume to find a config edited since the
// checkpoint it resumes from was written.
#include <string>
#include <string_view>
#include <vector>

namespace mtbert {

struct ResolvedChange {
  std::string key;     // dotted key path, e.g. train.lr
  std::string before;  // the value as written, or "nothing" where the key is absent
  std::string after;
};

// In the order of `after`'s keys, then the keys only `before` has.
std::vector<ResolvedChange> resolved_changes(std::string_view before, std::string_view after);

}  // namespace mtbert
