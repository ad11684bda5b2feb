#pragma once
// A sweep file: the experiments of a table or an ablation, the config values
// to vary, the seeds, as the researcher writes it (experiments/sweeps/):
//
//   name: final-table1                      # default: the file's stem
//   output_root: runs/final-table1          # default: runs/<name>; run folders are <output_root>/<run name>
//   experiments: [../final/baseline.yaml, ../final/smart.yaml]   # relative to this file
//   # or an entry with its own name and overrides (applied after any overlay):
//   #   - {file: ../deberta/emd.yaml, name: pretrained_emd, overrides: [model.pretrained=...]}
//   grid: {train.lr: [1.0e-5, 2.0e-5], tasks.sst.dropout: [0.1, 0.3]}  # every combination
//   list: [{train.lr: 1.0e-5, train.batch_size: 8}, {train.lr: 2.0e-5, train.batch_size: 16}]
//   seeds: [11711, 1, 2]                    # default: each experiment's own seed
//   overrides: [train.epochs=3]             # applied to every run
//
// grid and list are crossed: each point of the grid's cartesian product with
// each entry of the list (a missing grid or list is one empty point), then
// with each seed. How points become runs and run names: sweep_expansion.h.
//
// Values keep where they were written, so that a bad key or value is reported
// at its line of the sweep file when the runs' configs are validated.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "config/config_overrides.h"
#include "config/config_tree.h"

namespace mtbert {

// One config value of a point: `key` a dotted key path (train.lr), `value` as
// written in the sweep file (a scalar, list or map), with its origin.
struct SweepSetting {
  std::string key;
  ConfigNode value;
};

struct SweepSeed {
  uint64_t value = 0;
  ConfigOrigin origin;
};

struct SweepExperiment {
  std::filesystem::path path;  // resolved against the sweep file's folder
  ConfigOrigin origin;
  std::string name;  // its runs' names start with this: `name:`, or the file's stem
  // key=value overrides of this experiment's runs only, applied after the
  // experiment's files and any overlays, before the sweep's own overrides: a
  // row that must differ from what an overlay sets (its own pretrained model).
  std::vector<ConfigOverride> overrides;
};

struct SweepSpec {
  std::filesystem::path source;  // the sweep file
  std::string name;
  std::string output_root;       // as written (relative to the working directory)
  std::vector<SweepExperiment> experiments;
  // grid: each key with its values, in file order.
  std::vector<std::pair<std::string, std::vector<ConfigNode>>> grid;
  // list: each entry's settings, in file order.
  std::vector<std::vector<SweepSetting>> list;
  std::vector<SweepSeed> seeds;  // empty: the experiments' own seeds
  std::vector<ConfigOverride> overrides;
};

// Reads and checks a sweep file: unknown keys, wrong types, empty or repeated
// grid values and seeds, key paths that are malformed or that the sweep sets
// itself (name, output_dir, extends; seed when `seeds` is given). UserError
// naming the file, line and key. Whether the keys exist in an experiment is
// checked later, when every run's config is loaded.
SweepSpec load_sweep(const std::filesystem::path& path);

}  // namespace mtbert
