#include "data/tsv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/user_error.h"

namespace mtbert {

namespace {

bool is_line_break(char c) { return c == '\n' || c == '\r'; }

bool is_blank(const TsvRecord& record) {
  return std::all_of(record.fields.begin(), record.fields.end(), [](const std::string& field) {
    return field.find_first_not_of(" \t\r\n\f\v") == std::string::npos;
  });
}

}  // namespace

TsvReader::TsvReader(std::string text) : text_(std::move(text)) {
  if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
}

TsvReader TsvReader::from_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw UserError(fmt::format("cannot read {}: no such file", path.string()));
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::string text;
  if (in) {
    text.resize(static_cast<std::size_t>(in.tellg()));
    in.seekg(0);
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
  }
  if (!in) throw UserError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  return TsvReader(std::move(text));
}

void TsvReader::skip_line_break() {
  if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
  ++pos_;
  ++line_;
}

void TsvReader::resume_after_line(std::size_t start, int64_t line) {
  pos_ = start;
  line_ = line;
  while (pos_ < text_.size() && !is_line_break(text_[pos_])) ++pos_;
  if (pos_ < text_.size()) skip_line_break();
}

bool TsvReader::next(TsvRecord& record) {
  const std::size_t n = text_.size();
  while (pos_ < n) {
    record.fields.clear();
    record.runaway_quote = false;
    record.line = line_;
    const std::size_t record_start = pos_;
    bool quote_spans_lines = false;
    for (;;) {  // one field per iteration
      std::string field;
      if (pos_ < n && text_[pos_] == '"') {
        ++pos_;
        bool closed = false;
        while (pos_ < n) {
          const char c = text_[pos_];
          if (c == '"') {
            if (pos_ + 1 < n && text_[pos_ + 1] == '"') {
              field += '"';
              pos_ += 2;
              continue;
            }
            ++pos_;
            closed = true;
            break;
          }
          if (is_line_break(c)) {
            quote_spans_lines = true;
            const std::size_t from = pos_;
            skip_line_break();
            field.append(text_, from, pos_ - from);
            continue;
          }
          field += c;
          ++pos_;
        }
        if (!closed) {
          record.fields.clear();
          record.runaway_quote = true;
          resume_after_line(record_start, record.line);
          return true;
        }
      }
      // An unquoted field, or what follows a closing quote (kept, as Python does).
      const std::size_t from = pos_;
      while (pos_ < n && text_[pos_] != '\t' && !is_line_break(text_[pos_])) ++pos_;
      field.append(text_, from, pos_ - from);
      record.fields.push_back(std::move(field));
      if (pos_ < n && text_[pos_] == '\t') {
        ++pos_;
        continue;
      }
      if (pos_ < n) skip_line_break();
      break;
    }
    if (quote_spans_lines && width_ > 0 && record.fields.size() != width_) {
      record.fields.clear();
      record.runaway_quote = true;
      resume_after_line(record_start, record.line);
      return true;
    }
    if (!is_blank(record)) return true;
  }
  return false;
}

}  // namespace mtbert
