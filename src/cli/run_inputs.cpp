#include "cli/run_inputs.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/user_error.h"
#include "models/pretrained_model.h"

namespace mtbert::cli {

void check_run_inputs(const std::string& config_path, const std::string& pretrained,
                      const std::optional<std::string>& missing) {
  if (!pretrained.empty()) check_model_folder(pretrained);
  if (missing)
    throw UserError(fmt::format("{}: {} does not exist (relative paths start in the current folder, {})", config_path,
                                *missing, std::filesystem::current_path().string()));
}

}  // namespace mtbert::cli
