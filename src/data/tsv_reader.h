#pragma once
// Records of a tab-separated file, read the way the CS224N starter code reads
// its data (Python's `csv.reader(f, delimiter='\t')`, which pandas' writer
// matches): a field that starts with `"` is quoted and may hold tabs, line
// breaks and doubled `""`; a quote elsewhere in a field is an ordinary
// character, as is anything after a quoted field's closing quote. Records end
// at \n, \r\n or \r. A UTF-8 byte order mark is dropped and blank records
// (nothing but whitespace) are skipped.
//
// A stray quote at the start of a field swallows the text up to the next
// quote, line breaks included (Python reads it so, and the rows after it come
// out garbled). This reader reports such a record as a runaway quote, and
// resumes on the line after the one where it started, so that one stray quote
// costs one row: when the quote never closes, or, once it knows the width of
// the records (set_width), when it closes past a line break in a record of the
// wrong width.
//
// A file is read in chunks as the records need it, never whole: a record
// longer than limits::kTextRecordBytes is refused (an unquoted one as a
// UserError naming the line; a quoted one, a quote that swallows the file's
// rest, as a runaway quote), so memory stays bounded whatever the file.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mtbert {

struct TsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;                 // 1-based line of the file where the record starts
  bool runaway_quote = false;  // see above; fields are then empty
};

class TsvReader {
 public:
  // `text`: the whole file, as bytes.
  explicit TsvReader(std::string text);

  // Reads `path` as records are asked for, `chunk` bytes at a time. UserError
  // naming it when it is not a readable file.
  static TsvReader from_file(const std::filesystem::path& path, std::size_t chunk = 1 << 20);

  // The number of fields every record should have (0: unknown, the default).
  void set_width(std::size_t fields) { width_ = fields; }

  // The next non-blank record; false at the end of the text.
  bool next(TsvRecord& record);

 private:
  // Whether byte `i` of the file exists, reading chunks until it is loaded.
  bool have(std::size_t i);
  char at(std::size_t i) const { return buffer_[i - base_]; }
  // Moves past the line break at pos_ (\n, \r\n or \r), counting it.
  void skip_line_break();
  // Moves to the start of the line after `line`, which starts at `start`.
  void resume_after_line(std::size_t start, int64_t line);

  std::string path_;         // for messages; empty for a text
  std::ifstream in_;         // closed for a text
  std::size_t chunk_ = 0;
  std::string buffer_;       // bytes [base_, base_ + buffer_.size()) of the file
  std::size_t base_ = 0;
  std::size_t pos_ = 0;      // offset in the file
  int64_t line_ = 1;         // line of the byte at pos_
  std::size_t width_ = 0;
};

}  // namespace mtbert
