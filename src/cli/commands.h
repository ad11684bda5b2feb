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
void add_train_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_status_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_pretrain_command(CLI::App& app);
void add_fill_mask_command(CLI::App& app);
void add_config_reference_command(CLI::App& app);

// After the subcommands: a footer in each one's --help naming its docs/ page.
void add_docs_footers(CLI::App& app);

// A subcommand that ends without an error but not with success either (a
// training run stopped by a signal: 128 + the signal) sets its exit code here.
void set_exit_code(int code);
int exit_code();

}  // namespace mtbert::cli
