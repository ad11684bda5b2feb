#pragma once
// The files a new run (train, pretrain) reads, checked before its run folder,
// tokenizer or ranks exist: a missing one is one line naming its key.
#include <optional>
#include <string>

namespace mtbert::cli {

// `pretrained` (model.pretrained, when set) must be a model folder (the
// error says how to make one); `missing` (a first_missing_input of the
// config) is a UserError "<config>: <key>: <path> does not exist (relative
// paths start in the current folder, <cwd>)".
void check_run_inputs(const std::string& config_path, const std::string& pretrained,
                      const std::optional<std::string>& missing);

}  // namespace mtbert::cli
