#include "config/resolved_diff.h"

#include <map>
#include <utility>

namespace mtbert {

namespace {

// Each value's dotted key path and its text, in file order; a section (a key
// with nothing after its colon) is a path, not a value.
std::vector<std::pair<std::string, std::string>> flatten(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> path;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent == std::string_view::npos || line[indent] == '#' || colon == std::string_view::npos) continue;
    path.resize(std::min(path.size(), indent / 2));
    path.emplace_back(line.substr(indent, colon - indent));
    const size_t value = line.find_first_not_of(' ', colon + 1);
    if (value == std::string_view::npos) continue;  // a section
    std::string key;
    for (const auto& part : path) key += (key.empty() ? "" : ".") + part;
    values.emplace_back(std::move(key), std::string(line.substr(value)));
  }
  return values;
}

}  // namespace

std::vector<ResolvedChange> resolved_changes(std::string_view before, std::string_view after) {
  const auto old_values = flatten(before), new_values = flatten(after);
  std::map<std::string, std::string> old_map(old_values.begin(), old_values.end());
  std::vector<ResolvedChange> changes;
  for (const auto& [key, value] : new_values) {
    const auto it = old_map.find(key);
    if (it == old_map.end()) {
      changes.push_back({key, "nothing", value});
      continue;
    }
    if (it->second != value) changes.push_back({key, it->second, value});
    old_map.erase(it);
  }
  for (const auto& [key, value] : old_values)
    if (old_map.count(key)) changes.push_back({key, value, "nothing"});
  return changes;
}

}  // namespace mtbert
