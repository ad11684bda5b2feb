// Catch2's main(), compiled once in its own translation unit. Like the CLI, the
// test binary runs with passive OpenMP waiting (see core/runtime.h).
#define CATCH_CONFIG_RUNNER
#include "support/catch.h"

#include "core/runtime.h"

int main(int argc, char** argv) {
  mtbert::prepare_process(argc, argv);
  return Catch::Session().run(argc, argv);
}
