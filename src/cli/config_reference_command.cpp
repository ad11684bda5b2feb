// mtbert config-reference: the reference page of every config key, written
// from the schema (docs/config-reference.md is this command's output).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "config/config_reference.h"
#include "core/atomic_file.h"

namespace mtbert::cli {

void add_config_reference_command(CLI::App& app) {
  auto output = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("config-reference",
                                 "Print every experiment and pretraining config key (type, default, allowed values, "
                                 "meaning) as Markdown, from the schema");
  cmd->add_option("--output", *output, "Write the page to this file instead of stdout");
  cmd->callback([output] {
    const std::string page = config_reference_markdown();
    if (output->empty())
      fmt::print("{}", page);
    else
      write_text_atomically(*output, page);
  });
}

}  // namespace mtbert::cli
