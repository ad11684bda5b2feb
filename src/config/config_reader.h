#pragma once
// Typed reading of one map of a config tree, remembering which keys were
// asked for: whatever was not is an unknown key, reported with a "did you
// mean" suggestion among the keys valid at that level. Every error names the
// origin of the value (file:line, or the command line) and its key path:
//   experiments/foo.yaml:12: train.lr: expected a number, got 'fast'
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_tree.h"

namespace mtbert {

class ConfigReader {
 public:
  // `map` (a map node, or null for an absent section) must outlive the
  // reader; `path` is its key path ("" at the top); `origin` is where an
  // absent section would have been written.
  ConfigReader(const ConfigNode* map, std::string path, ConfigOrigin origin);
  explicit ConfigReader(const ConfigNode& root) : ConfigReader(&root, "", root.origin) {}

  // Each read marks `key` as known; an absent key leaves `value` unchanged.
  void read(std::string_view key, std::string& value);
  void read(std::string_view key, bool& value);  // true or false
  void read(std::string_view key, int64_t& value);
  void read(std::string_view key, uint64_t& value);
  void read(std::string_view key, double& value);  // finite
  void read(std::string_view key, std::vector<std::string>& value);  // a list of strings, or one

  // The map under `key` (empty when absent); anything but a map is an error.
  ConfigReader section(std::string_view key);
  // The value under `key` as it is (null when absent), marked as known.
  const ConfigNode* raw(std::string_view key);
  bool has(std::string_view key) const;
  // The keys present, in document order.
  std::vector<std::string> keys() const;

  std::string key_path(std::string_view key) const;
  // Where the value of `key` was written, or the map when it is absent.
  const ConfigOrigin& origin(std::string_view key) const;
  const ConfigOrigin& origin() const { return origin_; }
  const std::string& path() const { return path_; }

  // UserError "origin: key.path: message".
  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  void check(bool ok, std::string_view key, const std::string& message) const {
    if (!ok) fail(key, message);
  }
  // `value` (read from `key`) must be one of `choices`: the error lists them
  // and suggests the closest.
  void check_choice(std::string_view key, const std::string& value, const std::vector<std::string>& choices) const;

  // The first key present but never asked for is an error; `also_valid`
  // are keys handled elsewhere (e.g. `extends`), offered as suggestions too.
  void finish(const std::vector<std::string>& also_valid = {}) const;

 private:
  const ConfigNode* scalar(std::string_view key, const char* expected);

  const ConfigNode* map_;
  std::string path_;
  ConfigOrigin origin_;
  std::vector<std::string> known_;
};

}  // namespace mtbert
