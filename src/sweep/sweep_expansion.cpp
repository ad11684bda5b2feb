#include "sweep/sweep_expansion.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include <fnmatch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/yaml_quote.h"
#include "core/did_you_mean.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

std::string last_parts(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = parts.size() - std::min(n, parts.size()); i < parts.size(); ++i) out += (out.empty() ? "" : "_") + parts[i];
  return out;
}

// Each varied key's short form: its last part, or as many last parts as set
// it apart from every other varied key's as many last parts.
std::map<std::string, std::string> short_keys(const std::vector<std::string>& keys) {
  std::map<std::string, std::string> out;
  for (const auto& key : keys) {
    const auto parts = split_path(key);
    size_t n = 1;
    for (; n < parts.size(); ++n) {
      bool unique = true;
      for (const auto& other : keys)
        if (other != key && last_parts(split_path(other), n) == last_parts(parts, n)) unique = false;
      if (unique) break;
    }
    out[key] = last_parts(parts, n);
  }
  return out;
}

std::string sanitized(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '_';
    out += keep ? c : '_';
  }
  return out;
}

// A value as it appears in a run name (before sanitizing).
std::string name_text(const ConfigNode& value) {
  switch (value.kind) {
    case ConfigNode::Kind::null: return "null";
    case ConfigNode::Kind::scalar: {
      double number = 0;
      const std::string& t = value.text;
      const char* begin = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
      const auto [end, ec] = std::from_chars(begin, t.data() + t.size(), number);
      if (!value.quoted && !t.empty() && ec == std::errc() && end == t.data() + t.size() && std::isfinite(number))
        return fmt::format("{}", number);
      return t.empty() ? "empty" : t;
    }
    case ConfigNode::Kind::sequence: {
      std::string out;
      for (const auto& item : value.items) out += (out.empty() ? "" : "_") + name_text(item);
      return out.empty() ? "empty" : out;
    }
    case ConfigNode::Kind::map: break;
  }
  std::string out;
  for (const auto& [key, item] : value.entries) out += (out.empty() ? "" : "_") + key + "_" + name_text(item);
  return out.empty() ? "empty" : out;
}

bool plain_is_safe(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == '_' ||
                      c == '/' || c == '$' || c == '~';
    if (!safe) return false;
  }
  return true;
}

std::string key_of(const std::string& override_text) { return override_text.substr(0, override_text.find('=')); }

}  // namespace

std::string yaml_flow_text(const ConfigNode& value) {
  switch (value.kind) {
    case ConfigNode::Kind::null: return "null";
    case ConfigNode::Kind::scalar:
      return !value.quoted && plain_is_safe(value.text) ? value.text : yaml_double_quoted(value.text, Dollars::keep);
    case ConfigNode::Kind::sequence: {
      std::vector<std::string> items;
      for (const auto& item : value.items) items.push_back(yaml_flow_text(item));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    case ConfigNode::Kind::map: break;
  }
  std::vector<std::string> entries;
  for (const auto& [key, item] : value.entries)
    entries.push_back((plain_is_safe(key) ? key : yaml_double_quoted(key, Dollars::keep)) + ": " +
                      yaml_flow_text(item));
  return fmt::format("{{{}}}", fmt::join(entries, ", "));
}

std::vector<SweepRun> expand_sweep(const SweepSpec& spec, const fs::path& root,
                                   const std::vector<std::string>& extra_overrides) {
  // The points: the grid's cartesian product (first key slowest) crossed with
  // the list's entries.
  std::vector<std::vector<SweepSetting>> grid_points{{}};
  for (const auto& [key, values] : spec.grid) {
    std::vector<std::vector<SweepSetting>> next;
    for (const auto& point : grid_points) {
      for (const auto& value : values) {
        next.push_back(point);
        next.back().push_back(SweepSetting{key, value});
      }
    }
    grid_points = std::move(next);
  }
  std::vector<std::vector<SweepSetting>> points;
  const std::vector<std::vector<SweepSetting>> list = spec.list.empty() ? std::vector<std::vector<SweepSetting>>{{}} : spec.list;
  for (const auto& grid_point : grid_points) {
    for (const auto& entry : list) {
      points.push_back(grid_point);
      points.back().insert(points.back().end(), entry.begin(), entry.end());
    }
  }

  std::vector<std::string> varied;
  for (const auto& [key, values] : spec.grid) varied.push_back(key);
  for (const auto& entry : spec.list)
    for (const auto& setting : entry)
      if (std::find(varied.begin(), varied.end(), setting.key) == varied.end()) varied.push_back(setting.key);
  const auto short_key = short_keys(varied);

  std::vector<ConfigOverride> common = spec.overrides;
  for (const auto& text : extra_overrides) common.push_back(ConfigOverride{text});
  std::vector<const ConfigOverride*> fixed;
  for (const auto& o : common) fixed.push_back(&o);
  for (const auto& experiment : spec.experiments)
    for (const auto& o : experiment.overrides) fixed.push_back(&o);
  for (const ConfigOverride* override_ : fixed) {
    const ConfigOverride& o = *override_;
    if (std::find(varied.begin(), varied.end(), key_of(o.text)) != varied.end())
      throw UserError(fmt::format("{}: \"{}\": {} varies {} in this sweep, so this override would never apply; "
                                  "remove one of them",
                                  o.origin.describe(), o.text, spec.source.string(), key_of(o.text)));
    if (!spec.seeds.empty() && key_of(o.text) == "seed")
      throw UserError(fmt::format("{}: \"{}\": {} lists seeds, which set each run's seed", o.origin.describe(), o.text,
                                  spec.source.string()));
  }

  std::vector<SweepRun> runs;
  std::map<std::string, const SweepExperiment*> named;
  const ConfigOrigin sweep_origin{spec.source.string(), 0};
  for (const auto& experiment : spec.experiments) {
    for (const auto& point : points) {
      std::string group = sanitized(experiment.name);
      std::vector<std::string> point_texts;
      std::vector<ConfigOverride> point_overrides;
      for (const auto& setting : point) {
        group += "-" + short_key.at(setting.key) + sanitized(name_text(setting.value));
        const std::string text = setting.key + "=" + yaml_flow_text(setting.value);
        point_texts.push_back(text);
        point_overrides.push_back(ConfigOverride{text, setting.value.origin});
      }
      std::vector<std::optional<SweepSeed>> seeds;
      for (const auto& seed : spec.seeds) seeds.emplace_back(seed);
      if (seeds.empty()) seeds.emplace_back(std::nullopt);
      for (const auto& seed : seeds) {
        SweepRun run;
        run.group = group;
        run.name = seed ? fmt::format("{}-seed{}", group, seed->value) : group;
        run.experiment = experiment.path;
        run.folder = root / run.name;
        run.overrides = experiment.overrides;
        run.overrides.insert(run.overrides.end(), common.begin(), common.end());
        run.overrides.insert(run.overrides.end(), point_overrides.begin(), point_overrides.end());
        run.point = point_texts;
        if (seed) {
          run.seed = seed->value;
          run.overrides.push_back(ConfigOverride{fmt::format("seed={}", seed->value), seed->origin});
          run.point.push_back(fmt::format("seed={}", seed->value));
        }
        run.overrides.push_back(ConfigOverride{"name=" + run.name, sweep_origin});
        if (auto [it, fresh] = named.emplace(run.name, &experiment); !fresh)
          throw UserError(fmt::format("{}: two runs would both be named {} (from {} and {}): give the experiment "
                                      "files different names, or give the entries a name:",
                                      experiment.origin.describe(), run.name, it->second->path.string(),
                                      experiment.path.string()));
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

std::vector<SweepRun> select_runs(const std::vector<SweepRun>& runs, const std::vector<std::string>& patterns,
                                  const std::string& sweep_name) {
  if (patterns.empty()) return runs;
  auto matches = [](const std::string& pattern, const SweepRun& run) {
    return fnmatch(pattern.c_str(), run.name.c_str(), 0) == 0 || fnmatch(pattern.c_str(), run.group.c_str(), 0) == 0;
  };
  for (const auto& pattern : patterns) {
    if (std::any_of(runs.begin(), runs.end(), [&](const SweepRun& run) { return matches(pattern, run); })) continue;
    std::vector<std::string> names;
    for (const auto& run : runs) {
      names.push_back(run.name);
      if (run.group != run.name && std::find(names.begin(), names.end(), run.group) == names.end())
        names.push_back(run.group);
    }
    throw UserError(fmt::format("--only {}: no run of sweep {} has that name{} (mtbert sweep ... --dry-run lists them)",
                                pattern, sweep_name, did_you_mean_suffix(pattern, names)));
  }
  std::vector<SweepRun> selected;
  for (const auto& run : runs)
    if (std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return matches(p, run); }))
      selected.push_back(run);
  return selected;
}

}  // namespace mtbert
