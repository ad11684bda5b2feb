#pragma once
// The spelling of an enum's values in YAML, for the config's choice keys:
// strings become enums once, when the config is read, and turn back into
// the same strings when it is written. Each enum used in a config lists its
// names in one EnumNames<E> specialization (config/experiment_config.h).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtbert {

template <class E>
struct EnumNames;  // static constexpr std::pair<E, const char*> table[]

template <class E>
const char* enum_name(E value) {
  for (const auto& [v, name] : EnumNames<E>::table)
    if (v == value) return name;
  return "?";
}

template <class E>
std::optional<E> enum_from_name(std::string_view name) {
  for (const auto& [v, n] : EnumNames<E>::table)
    if (name == n) return v;
  return std::nullopt;
}

template <class E>
std::vector<std::string> enum_names() {
  std::vector<std::string> names;
  for (const auto& entry : EnumNames<E>::table) names.emplace_back(entry.second);
  return names;
}

}  // namespace mtbert
