#pragma once
// A YAML document as a tree of plain values that remember where they were
// written (file and line, or the command line), so that every error found
// after merging files and applying overrides can still name its origin.
// yaml-cpp's own nodes are reference-counted views that alias on assignment
// and forget their file; merging them safely needs deep copies anyway.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtbert {

struct ConfigOrigin {
  std::string file;  // a path as the user gave it, or "command line"
  int64_t line = 0;  // 1-based; 0: no line (the command line, a whole file)

  // "experiments/foo.yaml:12", "experiments/foo.yaml" or "command line".
  std::string describe() const;
};

struct ConfigNode {
  enum class Kind { null, scalar, sequence, map };

  Kind kind = Kind::null;
  std::string text;     // scalar: as written (unquoted)
  bool quoted = false;  // scalar: quoted or explicitly tagged, so always a string
  std::vector<ConfigNode> items;                          // sequence
  std::vector<std::pair<std::string, ConfigNode>> entries;  // map, in document order
  ConfigOrigin origin;

  static ConfigNode make_map(ConfigOrigin origin);
  static ConfigNode make_scalar(std::string text, ConfigOrigin origin);

  bool is_map() const { return kind == Kind::map; }
  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
  // Appends `key` when absent; replaces its value otherwise (keeping its place).
  ConfigNode& set(const std::string& key, ConfigNode value);
  void erase(std::string_view key);
};

// "a map", "a list", "an empty value" or the scalar quoted: for messages.
std::string describe_value(const ConfigNode& node);

// Parses YAML text; a syntax error or a duplicate key is a UserError naming
// `origin` and the line. An empty document is null.
ConfigNode parse_config_yaml(const std::string& text, const ConfigOrigin& origin);

// Reads and parses a file (origin: the path as given).
ConfigNode read_config_file(const std::filesystem::path& path);

// A file whose top level must be a map: a missing file or another shape is a
// UserError, e.g. "x.yaml: the sweep file does not exist" or "x.yaml:
// expected a sweep (name:, grid:), got a list" (what = "sweep", shape =
// "name:, grid:").
ConfigNode read_config_map_file(const std::filesystem::path& path, std::string_view what, std::string_view shape);

}  // namespace mtbert
