// mtbert status: where run folders stand and what a sweep would do with each,
// from the run-state module (train/run_status.h). A Slurm array task asks it
// before it trains, so that the script holds no copy of the rules.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "train/run_status.h"

namespace mtbert::cli {

namespace {

// One line per folder, "STATUS ACTION FOLDER", the folder last so that a
// script reads the first two words whatever the folder's name holds.
void print_status(const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    const RunStatus status = inspect_run(folder).status;
    fmt::print("{} {} {}\n", run_status_name(status), run_action_name(run_action(status)), folder);
  }
}

}  // namespace

void add_status_command(CLI::App& app) {
  auto folders = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("status", "Where run folders stand (missing, running, interrupted, failed, "
                                           "unresumable, finished, early_stopped) and what a sweep does next");
  cmd->add_option("run_dir", *folders, "Run folders (one that does not exist yet is missing)")
      ->required()
      ->check(folder_or_absent());
  cmd->callback([folders] { print_status(*folders); });
}

}  // namespace mtbert::cli
