// Catch2's main(), compiled once in its own translation unit. Like the CLI, the
// test binary runs with passive OpenMP waiting (see core/runtime.h).
#define CATCH_CONFIG_RUNNER
#include "support/catch.h"

#include "core/runtime.h"

int main(int argc, char** argv) {
  mtbert::prepare_process(argc, argv);
  Catch::Session session;
  // Every case carries its file's tag ([#batching_test]), as with -#: CTest
  // runs a file's cases together by it (test/CMakeLists.txt). Set here, not
  // as an option, since a test spec is all that Catch2's CMake discovery
  // passes on (v3's keeps only one argument of it).
  session.configData().filenamesAsTags = true;
  return session.run(argc, argv);
}
