#include "text/bert_basic_tokenizer.h"

#include <utf8proc.h>

#include <array>

namespace mtbert {

namespace {

enum class CharClass : uint8_t { kKeep, kDrop, kSpace, kCjk };

// ASCII needs no Unicode tables: C0 controls and DEL (category Cc) are
// dropped, except \t \n \r which, like the space, separate words.
constexpr std::array<CharClass, 128> make_ascii_classes() {
  std::array<CharClass, 128> classes{};
  for (int c = 0; c < 32; ++c) classes[c] = CharClass::kDrop;
  classes[127] = CharClass::kDrop;
  classes['\t'] = classes['\n'] = classes['\r'] = classes[' '] = CharClass::kSpace;
  return classes;
}
constexpr std::array<CharClass, 128> kAsciiClasses = make_ascii_classes();

// BERT counts every non-alphanumeric printable ASCII character as punctuation
// ("$", "+", "^" are symbols to Unicode, but punctuation here).
constexpr std::array<bool, 128> make_ascii_punctuation() {
  std::array<bool, 128> punctuation{};
  for (int c = 33; c <= 47; ++c) punctuation[c] = true;
  for (int c = 58; c <= 64; ++c) punctuation[c] = true;
  for (int c = 91; c <= 96; ++c) punctuation[c] = true;
  for (int c = 123; c <= 126; ++c) punctuation[c] = true;
  return punctuation;
}
constexpr std::array<bool, 128> kAsciiPunctuation = make_ascii_punctuation();

// The CJK Unified Ideographs blocks and their extensions and compatibility
// blocks, as BERT's original code lists them. Hangul, kana and CJK punctuation
// are deliberately not included.
bool is_cjk(utf8proc_int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// A non-ASCII code point's fate in the cleaning step.
CharClass classify(utf8proc_int32_t cp) {
  if (cp == 0xFFFD) return CharClass::kDrop;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
      return CharClass::kDrop;
    case UTF8PROC_CATEGORY_ZS:
    // Cleaning keeps U+2028 and U+2029, but Python's str.split() splits on them.
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return CharClass::kSpace;
    default:
      return is_cjk(cp) ? CharClass::kCjk : CharClass::kKeep;
  }
}

bool is_punctuation(utf8proc_int32_t cp) {
  if (cp < 128) return kAsciiPunctuation[cp];
  const utf8proc_category_t category = utf8proc_category(cp);
  return category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_PO;
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  utf8proc_uint8_t bytes[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(cp, bytes);
  out.append(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(n));
}

}  // namespace

// Buffers reused across the non-ASCII words of one split() call.
struct BertBasicTokenizer::Scratch {
  std::string word;
  std::vector<utf8proc_int32_t> code_points;

  // Normalises `word` into `code_points` (NFC with UTF8PROC_COMPOSE, NFD with
  // UTF8PROC_DECOMPOSE) and returns how many there are. `word` is valid UTF-8:
  // split() wrote it.
  std::size_t normalize(utf8proc_option_t options) {
    const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(word.data());
    const auto length = static_cast<utf8proc_ssize_t>(word.size());
    if (code_points.size() < word.size()) code_points.resize(word.size());
    auto capacity = static_cast<utf8proc_ssize_t>(code_points.size());
    utf8proc_ssize_t n = utf8proc_decompose(bytes, length, code_points.data(), capacity, options);
    if (n > capacity) {
      code_points.resize(static_cast<std::size_t>(n));
      n = utf8proc_decompose(bytes, length, code_points.data(), n, options);
    }
    if (options & UTF8PROC_COMPOSE) n = utf8proc_normalize_utf32(code_points.data(), n, options);
    return static_cast<std::size_t>(n);
  }
};

BertBasicTokenizer::BertBasicTokenizer(bool lower_case, std::vector<std::string> never_split)
    : lower_case_(lower_case), never_split_(std::move(never_split)) {}

bool BertBasicTokenizer::is_never_split(std::string_view word) const {
  for (const std::string& token : never_split_) {
    if (word == token) return true;
  }
  return false;
}

void BertBasicTokenizer::split(std::string_view text, BasicTokens& out) const {
  std::string& buffer = out.text;
  Scratch scratch;
  // The word being built is buffer[word_start, end); separators never reach
  // the buffer.
  std::size_t word_start = buffer.size();
  bool ascii = true;
  auto finish = [&] {
    if (buffer.size() > word_start) finish_word(out, word_start, ascii, scratch);
    word_start = buffer.size();
    ascii = true;
  };

  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const utf8proc_uint8_t byte = bytes[i];
    if (byte < 0x80) {
      ++i;
      switch (kAsciiClasses[byte]) {
        case CharClass::kDrop:
          continue;
        case CharClass::kSpace:
          finish();
          continue;
        default:
          buffer.push_back(static_cast<char>(lower_case_ && byte >= 'A' && byte <= 'Z' ? byte + 32 : byte));
          continue;
      }
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t length = utf8proc_iterate(bytes + i, static_cast<utf8proc_ssize_t>(size - i), &cp);
    if (length <= 0) {
      ++i;  // an invalid byte reads as U+FFFD, which cleaning drops
      continue;
    }
    i += static_cast<std::size_t>(length);
    // Python lowercases U+0130 to "i" + U+0307 where utf8proc's simple mapping
    // gives "i"; accent stripping (always on with lowercasing) makes them equal.
    if (lower_case_) cp = utf8proc_tolower(cp);
    switch (classify(cp)) {
      case CharClass::kDrop:
        break;
      case CharClass::kSpace:
        finish();
        break;
      case CharClass::kCjk:
        finish();
        append_utf8(buffer, cp);
        ascii = false;  // compatibility ideographs (U+F900...) change under NFC/NFD
        finish();
        break;
      case CharClass::kKeep:
        append_utf8(buffer, cp);
        ascii = false;
        break;
    }
  }
  finish();
}

void BertBasicTokenizer::finish_word(BasicTokens& out, std::size_t start, bool ascii, Scratch& scratch) const {
  std::string& buffer = out.text;
  if (ascii) {
    // ASCII is its own NFC and NFD: only punctuation splitting is left.
    if (is_never_split(std::string_view(buffer).substr(start))) {
      out.ends.push_back(static_cast<uint32_t>(buffer.size()));
    } else {
      split_ascii_punctuation(out, start);
    }
    return;
  }

  scratch.word.assign(buffer, start, std::string::npos);
  buffer.resize(start);
  // HuggingFace applies NFC, then (when lowercasing) NFD; NFD(NFC(w)) is
  // NFD(w), so lowercasing mode decomposes directly. It would also lowercase
  // the word a second time, which changes nothing: Python's lower() is
  // idempotent, also after NFC. The never_split check is only needed without
  // lowercasing: lowercased text cannot spell an uppercase special token (the
  // one canonical mapping to an uppercase ASCII letter, KELVIN SIGN -> K, was
  // lowercased with the rest).
  const std::size_t n = scratch.normalize(
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | (lower_case_ ? UTF8PROC_DECOMPOSE : UTF8PROC_COMPOSE)));
  const utf8proc_int32_t* cps = scratch.code_points.data();

  if (!lower_case_) {
    for (std::size_t k = 0; k < n; ++k) append_utf8(buffer, cps[k]);
    if (is_never_split(std::string_view(buffer).substr(start))) {
      out.ends.push_back(static_cast<uint32_t>(buffer.size()));
      return;
    }
    buffer.resize(start);
  }

  std::size_t piece_start = start;
  for (std::size_t k = 0; k < n; ++k) {
    const utf8proc_int32_t cp = cps[k];
    if (lower_case_ && utf8proc_category(cp) == UTF8PROC_CATEGORY_MN) continue;
    if (is_punctuation(cp)) {
      if (buffer.size() > piece_start) out.ends.push_back(static_cast<uint32_t>(buffer.size()));
      append_utf8(buffer, cp);
      out.ends.push_back(static_cast<uint32_t>(buffer.size()));
      piece_start = buffer.size();
    } else {
      append_utf8(buffer, cp);
    }
  }
  if (buffer.size() > piece_start) out.ends.push_back(static_cast<uint32_t>(buffer.size()));
}

void BertBasicTokenizer::split_ascii_punctuation(BasicTokens& out, std::size_t start) const {
  const std::string& buffer = out.text;
  std::size_t piece_start = start;
  for (std::size_t i = start; i < buffer.size(); ++i) {
    if (!kAsciiPunctuation[static_cast<unsigned char>(buffer[i])]) continue;
    if (i > piece_start) out.ends.push_back(static_cast<uint32_t>(i));
    out.ends.push_back(static_cast<uint32_t>(i + 1));
    piece_start = i + 1;
  }
  if (buffer.size() > piece_start) out.ends.push_back(static_cast<uint32_t>(buffer.size()));
}

std::vector<std::string> BertBasicTokenizer::tokenize(std::string_view text) const {
  BasicTokens words;
  split(text, words);
  std::vector<std::string> result;
  result.reserve(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) result.emplace_back(words[i]);
  return result;
}

}  // namespace mtbert
