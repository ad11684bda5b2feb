#include "sweep/sweep_spec.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/config_reader.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail_at(const ConfigOrigin& origin, const std::string& key_path, const std::string& message) {
  throw UserError(fmt::format("{}: {}: {}", origin.describe(), key_path, message));
}

// A name that is also a folder name.
bool valid_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// A config key path a point may set: dotted, no empty parts, not one of the
// keys the sweep sets for every run itself.
void check_key_path(const std::string& key, const ConfigOrigin& origin, const std::string& where) {
  const bool malformed = key.empty() || key.front() == '.' || key.back() == '.' ||
                         key.find("..") != std::string::npos || key.find('=') != std::string::npos;
  if (malformed)
    fail_at(origin, where, fmt::format("\"{}\" is not a config key path: write it dotted, e.g. train.lr", key));
  const std::string top = key.substr(0, key.find('.'));
  if (top == "seed") fail_at(origin, where, "vary seeds with the sweep's seeds: [...], not as a config key");
  if (top == "name" || top == "output_dir")
    fail_at(origin, where, fmt::format("the sweep names each run and its folder itself: {} cannot be varied", top));
  if (top == "extends") fail_at(origin, where, "extends works in experiment files only");
}

std::vector<const ConfigNode*> items_of(const ConfigNode& node, const std::string& where, const char* expected) {
  if (node.kind == ConfigNode::Kind::sequence) {
    std::vector<const ConfigNode*> items;
    for (const auto& item : node.items) items.push_back(&item);
    return items;
  }
  fail_at(node.origin, where, fmt::format("expected {}, got {}", expected, describe_value(node)));
}

std::string plain_text(const ConfigNode& node, const std::string& where, const char* expected) {
  if (node.kind != ConfigNode::Kind::scalar || node.text.empty())
    fail_at(node.origin, where, fmt::format("expected {}, got {}", expected, describe_value(node)));
  return node.text;
}

// key=value overrides: one, or a list of them.
std::vector<ConfigOverride> read_override_list(const ConfigNode& node, const std::string& where) {
  std::vector<const ConfigNode*> items;
  if (node.kind == ConfigNode::Kind::scalar) items.push_back(&node);
  else items = items_of(node, where, "a list of key.path=value overrides");
  std::vector<ConfigOverride> overrides;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item_where = fmt::format("{}[{}]", where, i);
    const std::string text = plain_text(*items[i], item_where, "an override key.path=value");
    const size_t eq = text.find('=');
    if (eq == std::string::npos)
      fail_at(items[i]->origin, item_where, fmt::format("\"{}\" is not an override: write key.path=value", text));
    check_key_path(text.substr(0, eq), items[i]->origin, item_where);
    overrides.push_back(ConfigOverride{text, items[i]->origin});
  }
  return overrides;
}

fs::path experiment_path(const ConfigNode& node, const std::string& where, const SweepSpec& spec) {
  fs::path path = plain_text(node, where, "the path of an experiment file");
  if (path.is_relative()) path = (spec.source.parent_path() / path).lexically_normal();
  return path;
}

// An entry of experiments: a file's path, or {file:, name:, overrides:}.
SweepExperiment read_experiment(const ConfigNode& node, const std::string& where, const SweepSpec& spec) {
  if (!node.is_map()) {
    const fs::path path = experiment_path(node, where, spec);
    return SweepExperiment{path, node.origin, path.stem().string(), {}};
  }
  ConfigReader r(&node, where, node.origin);
  const ConfigNode* file = r.raw("file");
  if (!file) fail_at(node.origin, where, "missing file: the experiment file of this entry");
  SweepExperiment experiment{experiment_path(*file, where + ".file", spec), node.origin, "", {}};
  experiment.name = experiment.path.stem().string();
  r.read("name", experiment.name);
  if (!valid_name(experiment.name))
    fail_at(node.origin, where + ".name",
            fmt::format("\"{}\" cannot start a run's name: use letters, digits, _, - and .", experiment.name));
  if (const ConfigNode* overrides = r.raw("overrides"))
    experiment.overrides = read_override_list(*overrides, where + ".overrides");
  r.finish();
  return experiment;
}

void read_experiments(const ConfigNode& node, SweepSpec& spec) {
  std::vector<const ConfigNode*> items;
  if (node.kind == ConfigNode::Kind::scalar) items.push_back(&node);
  else items = items_of(node, "experiments", "a list of experiment files");
  if (items.empty()) fail_at(node.origin, "experiments", "the list is empty: name at least one experiment file");
  for (size_t i = 0; i < items.size(); ++i)
    spec.experiments.push_back(read_experiment(*items[i], fmt::format("experiments[{}]", i), spec));
}

// Two values are the same point when they are written the same way.
bool same_value(const ConfigNode& a, const ConfigNode& b) {
  if (a.kind != b.kind || a.text != b.text || a.items.size() != b.items.size() || a.entries.size() != b.entries.size())
    return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!same_value(a.items[i], b.items[i])) return false;
  for (size_t i = 0; i < a.entries.size(); ++i)
    if (a.entries[i].first != b.entries[i].first || !same_value(a.entries[i].second, b.entries[i].second)) return false;
  return true;
}

void read_grid(const ConfigNode& node, SweepSpec& spec) {
  if (!node.is_map())
    fail_at(node.origin, "grid", fmt::format("expected a map of key paths to lists of values (train.lr: [1e-5, 2e-5]), "
                                             "got {}",
                                             describe_value(node)));
  for (const auto& [key, values] : node.entries) {
    const std::string where = fmt::format("grid.{}", key);
    check_key_path(key, values.origin, where);
    std::vector<ConfigNode> points;
    for (const ConfigNode* value : items_of(values, where, "a list of values, e.g. [1e-5, 2e-5]")) {
      for (const auto& seen : points)
        if (same_value(seen, *value)) fail_at(value->origin, where, "a value appears twice: keep one");
      points.push_back(*value);
    }
    if (points.empty()) fail_at(values.origin, where, "no values: give at least one");
    spec.grid.emplace_back(key, std::move(points));
  }
}

void read_list(const ConfigNode& node, SweepSpec& spec) {
  const auto entries = items_of(node, "list", "a list of points, e.g. [{train.lr: 1e-5, train.batch_size: 8}]");
  if (entries.empty()) fail_at(node.origin, "list", "the list is empty: give points, or leave list out");
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = fmt::format("list[{}]", i);
    const ConfigNode& entry = *entries[i];
    if (!entry.is_map())
      fail_at(entry.origin, where, fmt::format("expected a map of key paths to values, got {}", describe_value(entry)));
    std::vector<SweepSetting> point;
    for (const auto& [key, value] : entry.entries) {
      check_key_path(key, value.origin, fmt::format("{}.{}", where, key));
      for (const auto& [grid_key, values] : spec.grid)
        if (grid_key == key)
          fail_at(value.origin, fmt::format("{}.{}", where, key), "the grid varies this key too: keep it in one of them");
      point.push_back(SweepSetting{key, value});
    }
    spec.list.push_back(std::move(point));
  }
}

void read_seeds(ConfigReader& r, SweepSpec& spec) {
  const ConfigNode* node = r.raw("seeds");
  if (!node) return;
  std::vector<const ConfigNode*> items;
  if (node->kind == ConfigNode::Kind::scalar) items.push_back(node);
  else items = items_of(*node, "seeds", "a list of seeds, e.g. [11711, 1, 2]");
  if (items.empty()) fail_at(node->origin, "seeds", "the list is empty: give seeds, or leave seeds out");
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = fmt::format("seeds[{}]", i);
    const std::string text = plain_text(*items[i], where, "a non-negative integer");
    SweepSeed seed{0, items[i]->origin};
    const bool digits = std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    try {
      if (!digits) throw std::invalid_argument(text);
      seed.value = std::stoull(text);
    } catch (const std::exception&) {
      fail_at(items[i]->origin, where, fmt::format("expected a non-negative integer, got '{}'", text));
    }
    for (const auto& seen : spec.seeds)
      if (seen.value == seed.value) fail_at(seed.origin, where, fmt::format("seed {} appears twice", seed.value));
    spec.seeds.push_back(seed);
  }
}

void read_overrides(ConfigReader& r, SweepSpec& spec) {
  if (const ConfigNode* node = r.raw("overrides")) spec.overrides = read_override_list(*node, "overrides");
}

// experiments x the grid's values x the list's entries x the seeds, counted
// before anything is expanded (saturating: a grid of 30^20 points must not
// wrap around).
void check_run_count(const SweepSpec& spec) {
  uint64_t runs = std::max<size_t>(spec.experiments.size(), 1);
  std::string product = fmt::format("{} experiment(s)", spec.experiments.size());
  auto times = [&](size_t n, const std::string& what) {
    if (__builtin_mul_overflow(runs, static_cast<uint64_t>(std::max<size_t>(n, 1)), &runs)) runs = UINT64_MAX;
    product += fmt::format(" x {} {}", n, what);
  };
  for (const auto& [key, values] : spec.grid) times(values.size(), key);
  if (!spec.list.empty()) times(spec.list.size(), "list entries");
  if (!spec.seeds.empty()) times(spec.seeds.size(), "seeds");
  if (runs > static_cast<uint64_t>(limits::kSweepRuns))
    throw UserError(fmt::format("{}: the sweep has {} runs ({}); at most {} are allowed: split it into smaller sweeps",
                                spec.source.string(), runs == UINT64_MAX ? std::string("more than 2^64") : std::to_string(runs),
                                product, limits::kSweepRuns));
}

}  // namespace

SweepSpec load_sweep(const fs::path& path) {
  const ConfigNode root = read_config_map_file(path, "sweep", "name:, experiments:, grid:, ...");
  SweepSpec spec;
  spec.source = path;
  spec.name = path.stem().string();
  ConfigReader r(root);
  r.read("name", spec.name);
  r.check(valid_name(spec.name), "name",
          fmt::format("\"{}\" cannot name a sweep: use letters, digits, _, - and .", spec.name));
  spec.output_root = (fs::path("runs") / spec.name).string();
  r.read("output_root", spec.output_root);
  r.check(!spec.output_root.empty(), "output_root", "is empty: give the folder the run folders go to");
  const ConfigNode* experiments = r.raw("experiments");
  r.check(experiments != nullptr, "experiments", "missing: list the experiment files, e.g. [../base.yaml]");
  read_experiments(*experiments, spec);
  if (const ConfigNode* grid = r.raw("grid")) read_grid(*grid, spec);
  if (const ConfigNode* list = r.raw("list")) read_list(*list, spec);
  read_seeds(r, spec);
  read_overrides(r, spec);
  r.finish();
  check_run_count(spec);
  return spec;
}

}  // namespace mtbert
