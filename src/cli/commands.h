#pragma once
// Each subcommand lives in its own file (`<name>_command.cpp`) and exposes one
// function that adds it to the application. A subcommand's callback reports
// user mistakes by throwing mtbert::UserError; main() turns that into one line
// on stderr and exit code 2.
namespace CLI {
class App;
}

namespace mtbert::cli {

void add_tokenize_command(CLI::App& app);
void add_encode_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_attention_command(CLI::App& app);

}  // namespace mtbert::cli
