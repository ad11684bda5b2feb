#pragma once
// The things done with a config schema (the describe() functions of
// config/experiment_config.h), each a visitor with the same calls:
//
//   key(name, value, constraints...)   one value
//   section(name, struct)              a nested map, described in turn
//   tasks(name, vector<TaskConfig>)    the map of tasks, one described struct each
//   task_defaults(name)                a map of task keys every task inherits
//                                      (before tasks(); read into no struct of its own)
//
//   SchemaReader  reads a config tree into the structs: types, enum names,
//                 single-value constraints and unknown keys, each error naming
//                 the value's file, line and key path;
//   SchemaWriter  writes the structs back as YAML that SchemaReader reads to
//                 the same values (config.resolved.yaml);
//   KeyLister     lists the key paths, for tests and documentation checks.
//
// A fourth, in config/config_reference.cpp, writes the reference page of
// every key (docs/config-reference.md) from the same calls and their Doc.
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/config_reader.h"
#include "config/experiment_config.h"

namespace mtbert {

// ---------------------------------------------------------------------------
// Reading.

// Task names and tags: letters, digits, _ and - (they end up in file names).
bool is_config_word(const std::string& text);

// model.config's free-form HuggingFace keys as JSON (numbers, booleans and
// strings as YAML would read them).
nlohmann::json config_node_to_json(const ConfigNode& node);

class SchemaReader {
 public:
  explicit SchemaReader(ConfigReader reader) : r_(std::move(reader)) {}

  template <class T, class... Constraints>
  void key(std::string_view name, T& value, Constraints... constraints) {
    read(name, value);
    (check(name, value, constraints), ...);
  }

  template <class Section>
  void section(std::string_view name, Section& s) {
    SchemaReader nested(r_.section(name));
    describe(nested, s);
    nested.r_.finish();
  }

  // Every key of the map is a task; its `type` defaults to its name, its
  // other keys to task_defaults.
  void tasks(std::string_view name, std::vector<TaskConfig>& tasks);
  // A map of task keys (all but the ones naming a task's own files and
  // type), checked as a task's are; every task of tasks() starts from them.
  void task_defaults(std::string_view name);

  ConfigReader& reader() { return r_; }

 private:
  template <class T>
  void read(std::string_view name, T& value) {
    if constexpr (std::is_enum_v<T>) {  // by name, one of the enum's
      std::string text = enum_name(value);
      r_.read(name, text);
      r_.check_choice(name, text, enum_names<T>());
      value = *enum_from_name<T>(text);
    } else {
      r_.read(name, value);
    }
  }
  void read(std::string_view name, nlohmann::json& value);  // model.config: config/encoder_config_keys.h

  void check(std::string_view name, int64_t value, AtLeast c) const {
    r_.check(value >= c.min, name,
             fmt::format("must be at least {}{}, got {}", c.min, c.why ? fmt::format(" ({})", c.why) : "", value));
  }
  void check(std::string_view name, int64_t value, Range c) const {
    r_.check(value >= c.min && value <= c.max, name,
             fmt::format("must be between {} and {}{}, got {}", c.min, c.max, c.why ? fmt::format(" ({})", c.why) : "",
                         value));
  }
  void check(std::string_view name, double value, Positive) const {
    r_.check(value > 0, name, fmt::format("must be greater than 0, got {}", value));
  }
  void check(std::string_view name, double value, NonNegative) const {
    r_.check(value >= 0, name, fmt::format("must be at least 0, got {}", value));
  }
  void check(std::string_view name, double value, Fraction c) const {
    r_.check(value >= 0 && (c.one_allowed ? value <= 1 : value < 1), name,
             fmt::format("must be in [0, 1{}, got {}", c.one_allowed ? "]" : ")", value));
  }
  void check(std::string_view name, const std::vector<std::string>& values, Words) const;
  template <class T>
  void check(std::string_view, const T&, Doc) const {}  // for the reference page only

  ConfigReader r_;
  TaskConfig task_defaults_;
};

// ---------------------------------------------------------------------------
// Writing: strings double-quoted (so that "", "null", "yes" or "0123" stay
// strings) with `$` doubled (environment expansion on reading gives them back
// unchanged); numbers with the fewest digits that read back exactly.

class SchemaWriter {
 public:
  template <class T, class... Constraints>
  void key(std::string_view name, const T& value, Constraints...) {
    line(fmt::format("{}: {}", name, text(value)));
  }

  template <class Section>
  void section(std::string_view name, Section& s) {
    if (depth_ == 0) text_ += "\n";
    line(fmt::format("{}:", name));
    ++depth_;
    describe(*this, s);
    --depth_;
  }

  void tasks(std::string_view name, std::vector<TaskConfig>& tasks);
  // Nothing: every task is written with the values it inherited.
  void task_defaults(std::string_view) {}

  const std::string& yaml() const { return text_; }

  // One value as YAML (also the defaults of docs/config-reference.md).
  static std::string text(const std::string& value);
  static std::string text(bool value) { return value ? "true" : "false"; }
  static std::string text(int64_t value) { return fmt::format("{}", value); }
  static std::string text(uint64_t value) { return fmt::format("{}", value); }
  static std::string text(double value) { return fmt::format("{}", value); }
  static std::string text(const std::vector<std::string>& values);
  static std::string text(const nlohmann::json& value);  // a YAML flow collection
  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  static std::string text(E value) {
    return text(std::string(enum_name(value)));
  }

 private:
  void line(const std::string& s) { text_ += std::string(2 * depth_, ' ') + s + "\n"; }

  std::string text_;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------
// Listing: "train.schedule.kind", "tasks.<task>.smart.enabled", ...

class KeyLister {
 public:
  template <class T, class... Constraints>
  void key(std::string_view name, const T&, Constraints...) {
    keys_.push_back(prefix_ + std::string(name));
  }

  template <class Section>
  void section(std::string_view name, Section& s) {
    const std::string outer = prefix_;
    prefix_ += std::string(name) + ".";
    describe(*this, s);
    prefix_ = outer;
  }

  void tasks(std::string_view name, std::vector<TaskConfig>&) {
    TaskConfig any;
    section(std::string(name) + ".<task>", any);
  }

  // One key, as model.config: its keys are the tasks' own.
  void task_defaults(std::string_view name) { keys_.push_back(prefix_ + std::string(name)); }

  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::string prefix_;
  std::vector<std::string> keys_;
};

}  // namespace mtbert
