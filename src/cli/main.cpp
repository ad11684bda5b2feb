// mtbert: multi-task fine-tuning of BERT-family encoders.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/console.h"
#include "core/did_you_mean.h"
#include "core/runtime.h"
#include "core/user_error.h"
#include "dist/communicator.h"
#include "dist/launcher_watch.h"
#include "dist/rank_files.h"

namespace {

// A rank of the --nproc launcher leaves its error line in its error file,
// for the launcher to tell or drop (dist/rank_files.h); any other process
// prints it.
void print_line(mtbert::RankErrorKind kind, const std::string& prefix, const std::string& message) {
  const std::string line = prefix + mtbert::printable_line(message);
  if (mtbert::leave_rank_error({kind, line})) return;
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), mtbert::console());
}

// One line, no stack trace: what a user needs to fix their input.
int fail(const std::string& message) {
  print_line(mtbert::RankErrorKind::user, "mtbert: error: ", message);
  return 2;
}

int internal_error(const std::string& message) {
  print_line(mtbert::RankErrorKind::internal, "mtbert: internal error: ", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  mtbert::prepare_process(argc, argv);
  mtbert::follow_launcher();  // a rank of --nproc ends with its launcher
  mtbert::use_rank_files();   // and keeps its libraries' chatter in its log

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
  mtbert::cli::add_status_command(app);
  mtbert::cli::add_report_command(app);
  mtbert::cli::add_bench_command(app);
  mtbert::cli::add_config_reference_command(app);
  mtbert::cli::add_docs_footers(app);

  // A first word that names no subcommand: say so (CLI11 would say that a
  // subcommand is required, or that the arguments were not expected).
  // Otherwise a mistake in the arguments points at the help that explains
  // them: the subcommand's.
  std::string help = "mtbert --help";
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end())
      return fail(fmt::format("unknown command \"{}\"{}; the commands are {} (see mtbert --help)", argv[1],
                              mtbert::did_you_mean_suffix(argv[1], names), fmt::join(names, ", ")));
    help = fmt::format("mtbert {} --help", argv[1]);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(fmt::format("{} (see {})", e.what(), help));
  } catch (const mtbert::UserError& e) {
    return fail(e.message());
  } catch (const mtbert::DistributedError& e) {
    // Another rank is gone: one line, and out at once, without the process
    // group's destructors (they would wait on the peers that are gone).
    print_line(mtbert::RankErrorKind::peer, "mtbert: error: ", e.what());
    std::fflush(stdout);
    std::_Exit(1);
  } catch (const c10::Error& e) {
    // An allocation LibTorch could not make (CPU or GPU): sizes the user
    // chose (batch, length, model) too large for this machine.
    const std::string reason = mtbert::first_line(e.what_without_backtrace());
    if (reason.find("can't allocate memory") != std::string::npos || reason.find("out of memory") != std::string::npos)
      return fail("out of memory (" + reason + "): lower the batch size, the sequence length or the model's size");
    // Inputs are validated before they reach LibTorch, so this is a bug; its
    // message carries a C++ backtrace after the first line, which we keep out.
    return internal_error(reason);
  } catch (const std::bad_alloc&) {
    return fail("out of memory: a size in the config or an input is too large for this machine");
  } catch (const std::exception& e) {
    return internal_error(mtbert::first_line(e.what()));
  } catch (...) {
    return internal_error("an unknown exception");
  }
  return mtbert::cli::exit_code();
}
