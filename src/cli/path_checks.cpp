#include "cli/path_checks.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "train/run_directory.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;

enum class Wanted { folder, file };

// What is wrong with `path` for an option that wants `wanted`; "" when
// nothing is.
std::string path_problem(const std::string& path, Wanted wanted) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    if (ec == std::errc::too_many_symbolic_link_levels)
      return fmt::format("{} is a loop of symbolic links: following them never reaches a {}", path,
                         wanted == Wanted::folder ? "folder" : "file");
    if (ec == std::errc::permission_denied) return fmt::format("{}: permission denied on the way to it", path);
    if (ec == std::errc::not_a_directory) return fmt::format("{} does not exist: a part of its path is a file", path);
    return fmt::format("{}: {}", path, ec.message());
  }
  if (!fs::exists(status)) {
    std::error_code link_ec;
    if (fs::is_symlink(fs::symlink_status(path, link_ec)))
      return fmt::format("{} is a symbolic link to {}, which does not exist", path,
                         fs::read_symlink(path, link_ec).string());
    return fmt::format("{} does not exist", path);
  }
  if (wanted == Wanted::folder && !fs::is_directory(status)) return fmt::format("{} is a file, not a folder", path);
  if (wanted == Wanted::file && fs::is_directory(status)) return fmt::format("{} is a folder, not a file", path);
  return "";
}

// A run folder where a model folder is wanted: what it is, and the model
// folder it has, if any.
std::string run_folder_problem(const std::string& path) {
  const RunDirectory run(path);
  std::error_code ec;
  if (fs::exists(fs::path(path) / "config.json", ec) || !fs::exists(run.resolved_config(), ec)) return "";
  if (run.is_pretraining()) {
    const fs::path model = fs::path(path) / "model";
    return fmt::format("{} is a pretraining run folder, not a model folder: its encoder is {}{}", path,
                       model.string(), fs::is_directory(model, ec) ? "" : ", written when the run finishes");
  }
  return fmt::format("{} is a fine-tuning run folder (mtbert train), not a model folder: its encoder lives in its "
                     "checkpoints, read by mtbert eval and predict ({} holds its config); a model folder is a "
                     "converted checkpoint (scripts/convert_hf_checkpoint.py) or a pretraining run's model/",
                     path, run.model_config().string());
}

}  // namespace

CLI::Validator existing_folder() {
  return CLI::Validator([](std::string& path) { return path_problem(path, Wanted::folder); }, "FOLDER");
}

CLI::Validator existing_file() {
  return CLI::Validator([](std::string& path) { return path_problem(path, Wanted::file); }, "FILE");
}

CLI::Validator model_folder() {
  return CLI::Validator(
      [](std::string& path) {
        const std::string problem = path_problem(path, Wanted::folder);
        return problem.empty() ? run_folder_problem(path) : problem;
      },
      "FOLDER");
}

}  // namespace mtbert::cli
