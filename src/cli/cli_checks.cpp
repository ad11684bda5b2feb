#include "cli/cli_checks.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/limits.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "core/utf8_check.h"

namespace mtbert::cli {

namespace {

// The number CLI11 will read, or a message; CLI11 itself then says that a
// word is not a number, which these leave to it.
bool parse(const std::string& text, int64_t& value) {
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, value);
  return result.ec == std::errc() && result.ptr == end;
}

}  // namespace

CLI::Validator whole_number(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        int64_t value = 0;
        if (!parse(text, value)) return fmt::format("expected a whole number, got '{}'", text);
        if (value < min) return fmt::format("must be at least {}, got {}", min, value);
        if (value > max) return fmt::format("must be at most {}, got {}", max, value);
        return "";
      },
      max == INT64_MAX ? fmt::format("INT >= {}", min) : fmt::format("INT in [{}, {}]", min, max));
}

namespace {

CLI::Validator number_above(double min, bool inclusive) {
  return CLI::Validator(
      [min, inclusive](std::string& text) -> std::string {
        double value = 0;
        try {
          std::size_t used = 0;
          value = std::stod(text, &used);
          if (used != text.size()) throw std::invalid_argument(text);
        } catch (const std::exception&) {
          return fmt::format("expected a number, got '{}'", text);
        }
        if (!std::isfinite(value)) return fmt::format("expected a finite number, got '{}'", text);
        if (inclusive ? value < min : value <= min)
          return fmt::format("must be {} {}, got {}", inclusive ? "at least" : "greater than", min, text);
        return "";
      },
      inclusive ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace

CLI::Validator positive_number() { return number_above(0, false); }
CLI::Validator non_negative_number() { return number_above(0, true); }

CLI::Validator folder_or_absent() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::error_code ec;
        const auto status = std::filesystem::status(text, ec);
        if (!std::filesystem::exists(status) || std::filesystem::is_directory(status)) return "";
        return fmt::format("{} exists and is not a folder", text);
      },
      "FOLDER");
}

namespace {

// `path` absolute, its links resolved as far as it exists, without a
// trailing separator: two spellings of one place compare equal, and a path
// inside a folder starts with the folder's elements.
std::filesystem::path resolved(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

}  // namespace

void check_output_spares_inputs(const std::string& option, const std::filesystem::path& output,
                                const std::vector<std::filesystem::path>& inputs) {
  namespace fs = std::filesystem;
  // One rule for every command that writes: never over a file it reads, nor
  // inside a folder it reads (a model folder, a checkpoint), whatever the
  // name written and whether or not it exists yet.
  std::error_code ec;
  const fs::path written = resolved(output);
  for (const auto& input : inputs) {
    if (input.empty() || !fs::exists(input, ec)) continue;
    const fs::path read = resolved(input);
    const bool same = written == read || fs::equivalent(output, input, ec);
    const bool inside = !same && fs::is_directory(read, ec) &&
                        std::mismatch(read.begin(), read.end(), written.begin(), written.end()).first == read.end();
    if (same || inside)
      throw UserError(fmt::format("{} {} would {} {}, which this command reads; write it elsewhere", option,
                                  output.string(), inside ? "write inside" : "overwrite", input.string()));
  }
}

CLI::Validator utf8_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return utf8_problem(text, "the text").value_or("");
      },
      "TEXT");
}

CLI::Validator thread_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        if (!parse(text, value)) return fmt::format("expected a whole number, got '{}'", text);
        if (value < 0) return fmt::format("expected 0 (one per core) or a count of threads, got {}", value);
        if (value > max_thread_count())
          return fmt::format("{} is more than the {} threads this machine allows ({} per core on the {} cores this "
                             "process may use); 0 means one per core",
                             value, max_thread_count(), limits::kThreadsPerCore, available_cores());
        return "";
      },
      "INT (0: one per core)");
}

CLI::Validator local_rank_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        if (!parse(text, value)) return fmt::format("expected a whole number, got '{}'", text);
        const int most = std::max(2, available_cores());
        if (value < 1) return fmt::format("must be at least 1, got {}", value);
        if (value > most)
          return fmt::format("{} local ranks on the {} cores this process may use: give at most {}, or start the "
                             "ranks with a cluster launcher (torchrun, srun)",
                             value, available_cores(), most);
        return "";
      },
      "INT (local ranks)");
}

std::optional<std::pair<std::string, std::string>> name_and_value(const std::string& entry) {
  const auto eq = entry.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) return std::nullopt;
  return std::make_pair(entry.substr(0, eq), entry.substr(eq + 1));
}

}  // namespace mtbert::cli
