#pragma once
// Experiment files that build on others with `extends:`.
#include <filesystem>

#include "config/config_tree.h"

namespace mtbert {

// Reads `path` and, depth-first, the files it extends: `extends:` holds a
// path relative to the extending file (or absolute), or a list of them. Each
// listed file is read with its own `extends:`, merged in list order (later
// ones win) and then the extending file is merged on top (merge_config). A
// file's `name` and `output_dir` are never inherited: they identify one run.
// A cycle is a UserError naming the chain of files.
ConfigNode load_config_with_extends(const std::filesystem::path& path);

}  // namespace mtbert
