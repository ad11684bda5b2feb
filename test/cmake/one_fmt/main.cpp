// Prints the version of the fmt it was compiled against, through fmt and
// through spdlog.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

int main() {
  fmt::print("fmt {}\n", FMT_VERSION);
  spdlog::info("spdlog with fmt {}", FMT_VERSION);
}
