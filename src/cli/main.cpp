// mtbert: multi-task fine-tuning of BERT-family encoders.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <c10/util/Exception.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "cli/commands.h"
#include "core/runtime.h"
#include "core/user_error.h"
#include "dist/communicator.h"

namespace {

// One line, no stack trace: what a user needs to fix their input.
int fail(const std::string& message) {
  std::fprintf(stderr, "mtbert: error: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  mtbert::prepare_process(argc, argv);

  CLI::App app{"mtbert: multi-task fine-tuning of BERT-family encoders (SST, Quora, STS)", "mtbert"};
  app.set_version_flag("--version", std::string("mtbert ") + MTBERT_VERSION + " (LibTorch " +
                                        mtbert::torch_version_string() + ")");
  app.require_subcommand(1);
  app.fallthrough(false);
  mtbert::cli::add_tokenize_command(app);
  mtbert::cli::add_encode_command(app);
  mtbert::cli::add_fill_mask_command(app);
  mtbert::cli::add_info_command(app);
  mtbert::cli::add_attention_command(app);
  mtbert::cli::add_train_command(app);
  mtbert::cli::add_pretrain_command(app);
  mtbert::cli::add_eval_command(app);
  mtbert::cli::add_predict_command(app);
  mtbert::cli::add_sweep_command(app);
  mtbert::cli::add_report_command(app);
  mtbert::cli::add_bench_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + " (see mtbert --help)");
  } catch (const mtbert::UserError& e) {
    return fail(e.what());
  } catch (const mtbert::DistributedError& e) {
    // Another rank is gone: one line, and out at once, without the process
    // group's destructors (they would wait on the peers that are gone).
    std::fprintf(stderr, "mtbert: error: %s\n", e.what());
    std::fflush(stdout);
    std::_Exit(1);
  } catch (const c10::Error& e) {
    // Inputs are validated before they reach LibTorch, so this is a bug; its
    // message carries a C++ backtrace after the first line, which we keep out.
    std::fprintf(stderr, "mtbert: internal error: %s\n", mtbert::first_line(e.what()).c_str());
    return 1;
  } catch (const std::exception& e) {
    spdlog::critical("internal error: {}", e.what());
    return 1;
  }
  return mtbert::cli::exit_code();
}
