#include "data/tsv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/input_file.h"
#include "core/limits.h"
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

TsvReader::TsvReader(std::string text) : buffer_(std::move(text)) {
  if (buffer_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
}

TsvReader TsvReader::from_file(const std::filesystem::path& path, std::size_t chunk) {
  TsvReader reader{std::string()};
  reader.path_ = path.string();
  reader.in_ = open_input_file(path);
  reader.chunk_ = std::max<std::size_t>(chunk, 1);
  if (reader.have(2) && reader.buffer_.compare(0, 3, "\xEF\xBB\xBF") == 0) reader.pos_ = 3;
  return reader;
}

bool TsvReader::have(std::size_t i) {
  while (i >= base_ + buffer_.size() && in_.is_open() && in_) {
    const std::size_t old = buffer_.size();
    buffer_.resize(old + chunk_);
    in_.read(buffer_.data() + old, static_cast<std::streamsize>(chunk_));
    buffer_.resize(old + static_cast<std::size_t>(in_.gcount()));
    if (in_.bad()) throw UserError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
  }
  return i < base_ + buffer_.size();
}

void TsvReader::skip_line_break() {
  if (at(pos_) == '\r' && have(pos_ + 1) && at(pos_ + 1) == '\n') ++pos_;
  ++pos_;
  ++line_;
}

void TsvReader::resume_after_line(std::size_t start, int64_t line) {
  pos_ = start;
  line_ = line;
  while (have(pos_) && !is_line_break(at(pos_))) ++pos_;
  if (have(pos_)) skip_line_break();
}

bool TsvReader::next(TsvRecord& record) {
  while (have(pos_)) {
    // Nothing before this record is needed again.
    if (pos_ - base_ >= chunk_ && chunk_ > 0) {
      buffer_.erase(0, pos_ - base_);
      base_ = pos_;
    }
    record.fields.clear();
    record.runaway_quote = false;
    record.line = line_;
    const std::size_t record_start = pos_;
    const std::size_t record_end = record_start + limits::kTextRecordBytes;
    bool quote_spans_lines = false;
    for (;;) {  // one field per iteration
      std::string field;
      if (have(pos_) && at(pos_) == '"') {
        ++pos_;
        bool closed = false;
        while (have(pos_) && pos_ < record_end) {
          const char c = at(pos_);
          if (c == '"') {
            if (have(pos_ + 1) && at(pos_ + 1) == '"') {
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
            field.append(buffer_, from - base_, pos_ - from);
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
      while (have(pos_) && at(pos_) != '\t' && !is_line_break(at(pos_))) {
        if (++pos_ > record_end)
          throw UserError(fmt::format("{}:{}: a row longer than {} bytes; is this a data file of the task?",
                                      path_.empty() ? std::string("text") : path_, record.line, limits::kTextRecordBytes));
      }
      field.append(buffer_, from - base_, pos_ - from);
      record.fields.push_back(std::move(field));
      if (have(pos_) && at(pos_) == '\t') {
        ++pos_;
        continue;
      }
      if (have(pos_)) skip_line_break();
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
