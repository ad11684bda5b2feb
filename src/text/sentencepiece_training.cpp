#include "text/sentencepiece_training.h"

#include <fmt/format.h>

#include <fstream>
#include <thread>
#include <unordered_map>

#include "core/atomic_file.h"
#include "core/user_error.h"
#include "core/utf8_check.h"
#include "text/sentencepiece_engine.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

// Feeds the trainer the non-empty lines of the input files, one after the
// other. We read the files ourselves (instead of SentencePiece's `input=`) so
// that a bad line is reported with its file and line number; the trainer only
// sees the lines end, and train_sentencepiece() reports `error()`.
class FileLineReader {
 public:
  explicit FileLineReader(const std::vector<fs::path>& files) : files_(files) {}

  // The next non-empty line, or false at the end of the last file or on an
  // error.
  bool next(std::string* line) {
    while (error_.empty()) {
      if (!in_.is_open()) {
        if (next_file_ == files_.size()) return false;
        in_.open(files_[next_file_], std::ios::binary);
        line_number_ = 0;
        if (!in_) return fail(fmt::format("cannot read training input {}", files_[next_file_].string()));
        ++next_file_;
      }
      if (!std::getline(in_, *line)) {
        if (in_.bad()) return fail(fmt::format("cannot read training input {}", files_[next_file_ - 1].string()));
        in_.close();
        continue;
      }
      ++line_number_;
      if (!line->empty() && line->back() == '\r') line->pop_back();
      if (const auto problem = utf8_problem(*line)) {
        return fail(fmt::format("{}:{}: {}", files_[next_file_ - 1].string(), line_number_, *problem));
      }
      if (!line->empty()) {
        ++lines_read_;
        return true;
      }
    }
    return false;
  }

  int64_t lines_read() const { return lines_read_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  const std::vector<fs::path>& files_;
  std::size_t next_file_ = 0;
  std::ifstream in_;
  int64_t line_number_ = 0;
  int64_t lines_read_ = 0;
  std::string error_;
};

// SentencePiece prefixes failed checks with their source location and
// condition ("./src/trainer_interface.cc(660) [(a) == (b)] Vocabulary size too
// high..."); the user needs the sentence after it.
std::string sentencepiece_reason(const std::string& message) {
  const std::size_t condition_end = message.rfind("] ");
  if (message.rfind("./src/", 0) == 0 && condition_end != std::string::npos) return message.substr(condition_end + 2);
  return message;
}

std::string joined_paths(const std::vector<fs::path>& paths) {
  std::string joined;
  for (const fs::path& p : paths) joined += (joined.empty() ? "" : ", ") + p.string();
  return joined;
}

}  // namespace

void train_sentencepiece(const std::vector<fs::path>& inputs, const fs::path& model_file, int64_t vocab_size,
                         const SentencePieceTrainingOptions& options) {
  if (inputs.empty()) throw UserError("SentencePiece training needs at least one input file");
  for (const fs::path& input : inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(input, ec)) {
      throw UserError(fmt::format("training input {} does not exist", input.string()));
    }
  }
  // Five reserved pieces plus at least one learned one.
  if (vocab_size <= 5) {
    throw UserError(fmt::format("SentencePiece vocabulary size must exceed the 5 reserved pieces, not {}", vocab_size));
  }
  const unsigned cores = std::thread::hardware_concurrency();
  const int threads = options.num_threads > 0 ? options.num_threads : static_cast<int>(cores == 0 ? 1 : cores);

  const std::unordered_map<std::string, std::string> args = {
      {"vocab_size", std::to_string(vocab_size)},
      {"model_type", options.model_type},
      {"character_coverage", fmt::format("{}", options.character_coverage)},
      {"normalization_rule_name", options.normalization},
      {"input_sentence_size", std::to_string(options.max_sentences)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(threads)},
      {"byte_fallback", options.byte_fallback ? "true" : "false"},
      {"hard_vocab_limit", options.hard_vocab_limit ? "true" : "false"},
      // SentencePiece skips longer lines with only a log line (its default
      // is 4192 bytes): a corpus of whole documents would lose them.
      {"max_sentence_length", "1000000"},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "2"},
      {"eos_id", "3"},
      {"pad_piece", "[PAD]"},
      {"unk_piece", "[UNK]"},
      {"bos_piece", "[CLS]"},
      {"eos_piece", "[SEP]"},
      {"control_symbols", "[MASK]"},
      // Warnings and errors only: its per-iteration progress is noise here.
      {"minloglevel", "1"},
  };

  const SentencePieceApi& api = sentencepiece_api();
  FileLineReader lines(inputs);
  std::string serialized_model, error;
  const bool trained =
      api.train(args, [&](std::string* line) { return lines.next(line); }, options.seed, &serialized_model, &error);
  if (!lines.error().empty()) throw UserError(lines.error());
  if (lines.lines_read() == 0) throw UserError(fmt::format("training input {} has no text", joined_paths(inputs)));
  if (!trained) {
    throw UserError(
        fmt::format("SentencePiece training on {} failed: {}", joined_paths(inputs), sentencepiece_reason(error)));
  }
  write_text_atomically(model_file, serialized_model);
}

}  // namespace mtbert
