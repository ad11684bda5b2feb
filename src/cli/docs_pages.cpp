// Where each subcommand is explained: a footer line in its --help, so that
// the help a user reads names the page to read next.
#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include "cli/commands.h"

namespace mtbert::cli {

void add_docs_footers(CLI::App& app) {
  // docs/ pages by subcommand; a subcommand missing here gets the index
  // (test/scripts/docs_links_test.py checks that each page exists).
  static const std::map<std::string, std::string> pages = {
      {"tokenize", "docs/experiments.md"},
      {"encode", "docs/models.md"},
      {"fill-mask", "docs/models.md"},
      {"info", "docs/models.md"},
      {"attention", "docs/deberta.md"},
      {"train", "docs/experiments.md"},
      {"pretrain", "docs/pretraining.md"},
      {"eval", "docs/experiments.md"},
      {"predict", "docs/experiments.md"},
      {"sweep", "docs/sweeps-and-reports.md"},
      {"status", "docs/sweeps-and-reports.md"},
      {"report", "docs/sweeps-and-reports.md"},
      {"bench", "BENCHMARKS.md"},
      {"config-reference", "docs/config-reference.md"},
  };
  app.footer("Documentation: README.md, and one page per topic in docs/ (docs/README.md lists them).");
  for (auto* sub : app.get_subcommands({})) {
    const auto page = pages.find(sub->get_name());
    sub->footer("Documentation: " + (page == pages.end() ? std::string("docs/README.md") : page->second));
  }
}

}  // namespace mtbert::cli
