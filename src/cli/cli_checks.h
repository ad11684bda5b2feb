#pragma once
// Checks of CLI options with short messages. CLI11's own number checks say
// "Value 0 not in range 0.000000 to 1797693134862315708145274237317043567981
// ..." (400 characters); these say "--nproc: must be at least 1, got 0".
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace mtbert::cli {

// A whole number in [min, max].
CLI::Validator whole_number(int64_t min, int64_t max = INT64_MAX);

// A number > 0, and a number >= 0.
CLI::Validator positive_number();
CLI::Validator non_negative_number();

// A folder that is written into or read from when it exists (--out, --runs):
// a path that names something else, such as a file, is refused.
CLI::Validator folder_or_absent();

// The output rule of every command that writes: an output (a file, or a
// folder of outputs) is none of `inputs` (files, or folders whose files the
// command reads) and lies inside none of them. UserError naming `option`.
void check_output_spares_inputs(const std::string& option, const std::filesystem::path& output,
                                const std::vector<std::filesystem::path>& inputs);

// An option's NAME=VALUE (--data TASK=PATH, --also-against STEM=LABEL),
// split at the first '=': none unless both parts are non-empty.
std::optional<std::pair<std::string, std::string>> name_and_value(const std::string& entry);

// Text handed to a tokenizer (--text): valid UTF-8, or the byte that is not.
CLI::Validator utf8_text();

// --threads: 0 (one per core) to limits::kThreadsPerCore per available core.
CLI::Validator thread_count();

// --nproc: local ranks, at least 1 and at most one per available core (two at
// least, so that data-parallel runs can be tried anywhere).
CLI::Validator local_rank_count();

}  // namespace mtbert::cli
