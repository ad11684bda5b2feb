// `mtbert tokenize`: encode stdin, one text (or tab-separated pair) a line, as
// the model would see it. Useful to check a tokenizer against HuggingFace's and
// to inspect truncation.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "core/json_file.h"
#include "core/user_error.h"
#include "core/utf8_check.h"
#include "text/sentencepiece_tokenizer.h"
#include "text/sequence_encoder.h"
#include "text/tokenizer.h"
#include "text/wordpiece_tokenizer.h"

namespace mtbert::cli {

namespace {

struct TokenizeOptions {
  std::string vocab;
  std::string model;
  std::string spm;
  int64_t max_length = 0;
  bool pairs = false;
  std::string format = "ids";
  bool no_lower_case = false;
};

std::unique_ptr<Tokenizer> open_tokenizer(const TokenizeOptions& o) {
  const int sources = !o.vocab.empty() + !o.model.empty() + !o.spm.empty();
  if (sources != 1) throw UserError("tokenize needs exactly one of --vocab FILE, --model DIR or --spm FILE");
  if (!o.vocab.empty()) return WordPieceTokenizer::from_vocab_file(o.vocab, !o.no_lower_case);
  if (!o.model.empty()) return load_tokenizer(o.model);
  return std::make_unique<SentencePieceTokenizer>(o.spm);
}

// Reads stdin one line at a time (so input of any size streams through),
// without its \n or \r\n.
class StdinLines {
 public:
  StdinLines() = default;
  StdinLines(const StdinLines&) = delete;
  StdinLines& operator=(const StdinLines&) = delete;
  ~StdinLines() { std::free(buffer_); }

  bool next(std::string_view& line) {
    const ssize_t n = ::getline(&buffer_, &capacity_, stdin);
    if (n < 0) {
      if (std::ferror(stdin)) throw UserError("cannot read stdin");
      return false;
    }
    ++number_;
    line = std::string_view(buffer_, static_cast<std::size_t>(n));
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }
  int64_t number() const { return number_; }

 private:
  char* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  int64_t number_ = 0;
};

void append_json(fmt::memory_buffer& out, const Tokenizer& tok, const Encoding& e) {
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (const int64_t id : e.ids) tokens.push_back(tok.id_to_piece(id));
  const nlohmann::ordered_json line = {{"tokens", std::move(tokens)},
                                       {"ids", e.ids},
                                       {"token_type_ids", e.token_type_ids},
                                       {"attention_mask", e.attention_mask}};
  const std::string text = json_text(line);
  out.append(text.data(), text.data() + text.size());
}

void run_tokenize(const TokenizeOptions& o) {
  const std::unique_ptr<Tokenizer> tok = open_tokenizer(o);
  const SpecialTokenIds& special = tok->special_ids();
  // Fails on an impossible --max-length before any input is read.
  if (o.pairs) {
    encode_id_pair(special, {}, {}, o.max_length);
  } else {
    encode_ids(special, {}, o.max_length);
  }

  StdinLines lines;
  std::string_view line;
  fmt::memory_buffer out;
  while (lines.next(line)) {
    check_utf8_line(line, "stdin", lines.number());
    Encoding e;
    if (o.pairs) {
      const std::size_t tab = line.find('\t');
      if (tab == std::string_view::npos || line.find('\t', tab + 1) != std::string_view::npos) {
        throw UserError(
            fmt::format("stdin:{}: --pairs expects two texts separated by exactly one tab", lines.number()));
      }
      e = encode_pair(*tok, line.substr(0, tab), line.substr(tab + 1), o.max_length);
    } else {
      e = encode_single(*tok, line, o.max_length);
    }

    out.clear();
    if (o.format == "json") {
      append_json(out, *tok, e);
    } else {
      for (std::size_t i = 0; i < e.ids.size(); ++i) {
        if (i) out.push_back(' ');
        fmt::format_to(std::back_inserter(out), "{}", e.ids[i]);
      }
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) throw UserError("cannot write to stdout");
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Encode UTF-8 lines from stdin into token ids, [CLS]/[SEP] included (with --pairs, two texts per line "
      "separated by one tab). Lines may end in \\r\\n; a line that is not valid UTF-8 is an error naming it.");
  CLI::Option* vocab = cmd->add_option("--vocab", options->vocab, "WordPiece vocab.txt (BERT)");
  CLI::Option* model = cmd->add_option("--model", options->model,
                                       "Model folder holding vocab.txt (+ tokenizer_config.json) or spm.model");
  CLI::Option* spm = cmd->add_option("--spm", options->spm, "SentencePiece .model file");
  vocab->excludes(model, spm);
  model->excludes(spm);
  cmd->add_option("--max-length", options->max_length,
                  "Truncate to this many tokens, special tokens included (longest_first for pairs); 0: no limit");
  cmd->add_flag("--pairs", options->pairs, "Each line holds two texts separated by a tab");
  cmd->add_option("--format", options->format, "ids: space-separated ids; json: one object per line")
      ->check(CLI::IsMember({"ids", "json"}));
  cmd->add_flag("--no-lower-case", options->no_lower_case,
                "With --vocab: a cased vocabulary (no lowercasing, accents kept)")
      ->needs(vocab);
  cmd->callback([options] { run_tokenize(*options); });
}

}  // namespace mtbert::cli
