#pragma once
// A sweep's runs: experiments x grid points x list entries x seeds, each with
// a stable, readable name and its own folder. mtbert sweep runs them and
// mtbert report finds them through this one expansion, so a name is computed
// in exactly one place.
//
// Names: the experiment entry's name (default: its file's stem), then `-<key><value>` for every key the
// grid and list set (in file order), then `-seed<N>` when the sweep lists
// seeds:
//   baseline                      (no grid, list or seeds)
//   baseline-lr2e-05-seed1        (grid: {train.lr: [...]}, seeds: [...])
// <key> is the key path's last part, or as many last parts as tell it apart
// from the sweep's other keys, joined by _ (sst_dropout, para_dropout). A
// number is written in its shortest form (2.0e-5 -> 2e-05, 8.0 -> 8); other
// values as written, lists and maps with their items joined by _; characters
// other than letters, digits, . + - _ become _. A name depends only on its own
// point, so adding values or seeds to a sweep never renames existing runs.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config_overrides.h"
#include "sweep/sweep_spec.h"

namespace mtbert {

struct SweepRun {
  std::string name;                 // baseline-lr2e-05-seed1
  std::string group;                // baseline-lr2e-05: the runs that differ only in their seed
  std::filesystem::path experiment;  // the experiment file
  std::filesystem::path folder;      // <root>/<name>
  std::optional<uint64_t> seed;      // the sweep's seed; none: the experiment's own
  // Applied after the experiment's files (and any overlays), in this order:
  // the experiment entry's overrides, the sweep's, the command line's, the
  // point's values, seed=, name=. Each remembers where it was written.
  std::vector<ConfigOverride> overrides;
  // The part of `overrides` that makes this run differ from the others: the
  // point's values and the seed (for listings).
  std::vector<std::string> point;
};

// The runs of `spec` with their folders under `root`, in order: experiment
// by experiment, grid points (the first key varying slowest), list entries,
// seeds. `extra_overrides` come from the command line and apply to every run.
// UserError when two runs would get the same name, or when an override sets
// a key that the grid or list varies (the point would silently win).
std::vector<SweepRun> expand_sweep(const SweepSpec& spec, const std::filesystem::path& root,
                                   const std::vector<std::string>& extra_overrides = {});

// The runs `patterns` select (mtbert sweep --only), in the sweep's order: a
// pattern selects a run when it matches the run's name or its group (the name
// without -seed<N>, as report rows name runs), with shell wildcards (* ? [..]).
// All runs when `patterns` is empty. UserError naming a pattern that selects
// nothing (with the closest name when it looks like a typo).
std::vector<SweepRun> select_runs(const std::vector<SweepRun>& runs, const std::vector<std::string>& patterns,
                                  const std::string& sweep_name);

// A value as YAML flow text that parses back to the same value (the right
// side of key=value): plain where that is unambiguous, double-quoted where the
// sweep file quoted it or where it holds YAML's special characters.
std::string yaml_flow_text(const ConfigNode& value);

}  // namespace mtbert
