// Expected records are what Python's csv.reader(f, delimiter='\t') returns for
// the same bytes (checked by hand with /usr/bin/python3), except where this
// reader deliberately differs: blank records and runaway quotes.
#include "data/tsv_reader.h"

#include "core/limits.h"
#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using mtbert::TsvReader;
using mtbert::TsvRecord;

namespace {

using Fields = std::vector<std::string>;

std::vector<TsvRecord> read_all(std::string text) {
  TsvReader reader(std::move(text));
  std::vector<TsvRecord> records;
  TsvRecord record;
  while (reader.next(record)) records.push_back(record);
  return records;
}

}  // namespace

TEST_CASE("plain records, LF and CRLF, with and without a final line break", "[tsv_reader]") {
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    const auto records = read_all("\tid\tsentence" + eol + "0\tx1\tgood film" + eol + "1\tx2\tbad");
    REQUIRE(records.size() == 3);
    CHECK(records[0].fields == Fields{"", "id", "sentence"});
    CHECK(records[1].fields == Fields{"0", "x1", "good film"});
    CHECK(records[2].fields == Fields{"1", "x2", "bad"});
    CHECK(records[0].line == 1);
    CHECK(records[2].line == 3);
    CHECK_FALSE(records[2].runaway_quote);
  }
}

TEST_CASE("quoted fields: doubled quotes, tabs and line breaks inside", "[tsv_reader]") {
  // Line 2 holds a field spanning lines 2-3 (CRLF kept inside), line 4 the next record.
  const auto records = read_all(
      "a\tb\tc\n"
      "\"say \"\"hi\"\"\"\t\"tab\there\"\t\"two\r\nlines\"\n"
      "\"\"\t\"\"\"\"\tplain\n");
  REQUIRE(records.size() == 3);
  CHECK(records[1].fields == Fields{"say \"hi\"", "tab\there", "two\r\nlines"});
  CHECK(records[1].line == 2);
  CHECK(records[2].fields == Fields{"", "\"", "plain"});
  CHECK(records[2].line == 4);
}

TEST_CASE("quotes that do not open a field are ordinary characters", "[tsv_reader]") {
  // csv.reader: 'It "works"' stays as is; '"a"b' is 'ab' (text after the closing quote is kept).
  const auto records = read_all("It \"works\"\t\"a\"b\tx\"\n");
  REQUIRE(records.size() == 1);
  CHECK(records[0].fields == Fields{"It \"works\"", "ab", "x\""});
}

TEST_CASE("the Quora rows whose quoting pandas mangled read as Python reads them", "[tsv_reader]") {
  // quora-dev.csv line 2577: an opening quote, a doubled quote, then a single
  // closing quote; then an empty label.
  const auto records = read_all("65479\tad11\tAny idea?\t\"\"\"Where can I find a dress?\"\t\n");
  REQUIRE(records.size() == 1);
  CHECK(records[0].fields == Fields{"65479", "ad11", "Any idea?", "\"Where can I find a dress?", ""});
}

TEST_CASE("byte order mark dropped, blank lines skipped, line numbers kept", "[tsv_reader]") {
  const auto records = read_all("\xEF\xBB\xBF\tid\n\n   \r\n0\tx\n\t\t\n\n1\ty\n");
  REQUIRE(records.size() == 3);
  CHECK(records[0].fields == Fields{"", "id"});
  CHECK(records[1].fields == Fields{"0", "x"});
  CHECK(records[1].line == 4);
  CHECK(records[2].fields == Fields{"1", "y"});
  CHECK(records[2].line == 7);
}

TEST_CASE("a quote that never closes costs its own line only", "[tsv_reader]") {
  const auto records = read_all("h\n0\t\"never closed\n1\tfine\n2\tstill fine");
  REQUIRE(records.size() == 4);
  CHECK(records[1].runaway_quote);
  CHECK(records[1].fields.empty());
  CHECK(records[1].line == 2);
  CHECK(records[2].fields == Fields{"1", "fine"});
  CHECK(records[2].line == 3);
  CHECK_FALSE(records[2].runaway_quote);
  CHECK(records[3].fields == Fields{"2", "still fine"});
}

TEST_CASE("a quote closed lines later in a record of the wrong width costs its own line", "[tsv_reader]") {
  // The stray quote of line 2 is closed by the one at the end of line 4;
  // Python would read lines 2-4 as one record of 3 fields.
  const std::string text =
      "a\tb\tc\td\n"
      "0\tid1\t\"stray quote\t3\n"
      "1\tid2\tfine\t2\n"
      "2\tid3\tok\tbad\"\n";
  const auto unknown_width = read_all(text);
  REQUIRE(unknown_width.size() == 2);
  CHECK(unknown_width[1].fields == Fields{"0", "id1", "stray quote\t3\n1\tid2\tfine\t2\n2\tid3\tok\tbad"});

  TsvReader reader(text);
  reader.set_width(4);
  std::vector<TsvRecord> records;
  TsvRecord record;
  while (reader.next(record)) records.push_back(record);
  REQUIRE(records.size() == 4);
  CHECK(records[1].runaway_quote);
  CHECK(records[1].line == 2);
  CHECK(records[2].fields == Fields{"1", "id2", "fine", "2"});
  CHECK(records[3].fields == Fields{"2", "id3", "ok", "bad\""});
  CHECK(records[3].line == 4);
  // A quoted line break in a record of the right width is data, not a runaway.
  TsvReader fine("a\tb\n\"two\nlines\"\tx\n");
  fine.set_width(2);
  REQUIRE(fine.next(record));
  REQUIRE(fine.next(record));
  CHECK(record.fields == Fields{"two\nlines", "x"});
}

TEST_CASE("empty fields and trailing tabs", "[tsv_reader]") {
  const auto records = read_all("a\t\tb\t\n\tx\n");
  REQUIRE(records.size() == 2);
  CHECK(records[0].fields == Fields{"a", "", "b", ""});
  CHECK(records[1].fields == Fields{"", "x"});
}

TEST_CASE("files: streamed, missing file is a UserError naming it", "[tsv_reader]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("f.csv", "x\ty\n1\t2\n");
  TsvReader reader = TsvReader::from_file(path);
  TsvRecord record;
  REQUIRE(reader.next(record));
  REQUIRE(reader.next(record));
  CHECK(record.fields == Fields{"1", "2"});
  CHECK_FALSE(reader.next(record));
  CHECK_THROWS_AS(TsvReader::from_file(dir / "nope.csv"), mtbert::UserError);
  CHECK_THROWS_WITH(TsvReader::from_file(dir / "nope.csv"),
                    Catch::Matchers::ContainsSubstring("nope.csv") && Catch::Matchers::ContainsSubstring("no such file"));
}

TEST_CASE("a file read in small chunks gives the records of the whole text", "[tsv_reader]") {
  // Chunk boundaries fall inside \r\n, inside "" and inside quoted line breaks.
  const std::string text =
      "\xEF\xBB\xBF\tid\tsentence\r\n0\ta\t\"say \"\"hi\"\"\r\nthere\"\r\n\r\n1\tb\tplain\r2\tc\t\"never closed\n"
      "3\td\tlast";
  mtbert::test::TempDir dir;
  const auto path = dir.write("f.csv", text);
  const auto whole = read_all(text);
  for (const std::size_t chunk : {1, 2, 3, 7, 64}) {
    INFO("chunk " << chunk);
    TsvReader reader = TsvReader::from_file(path, chunk);
    std::vector<TsvRecord> records;
    TsvRecord record;
    while (reader.next(record)) records.push_back(record);
    REQUIRE(records.size() == whole.size());
    for (size_t i = 0; i < records.size(); ++i) {
      CHECK(records[i].fields == whole[i].fields);
      CHECK(records[i].line == whole[i].line);
      CHECK(records[i].runaway_quote == whole[i].runaway_quote);
    }
  }
}

TEST_CASE("a row longer than the record limit is refused, a quote running past it is a runaway", "[tsv_reader]") {
  mtbert::test::TempDir dir;
  const std::string long_row(mtbert::limits::kTextRecordBytes + 10, 'x');
  TsvReader unquoted = TsvReader::from_file(dir.write("long.csv", "h\n0\t" + long_row + "\n1\tok\n"));
  TsvRecord record;
  REQUIRE(unquoted.next(record));
  CHECK_THROWS_WITH(unquoted.next(record), Catch::Matchers::ContainsSubstring("long.csv:2: a row longer than 1048576 bytes"));

  TsvReader quoted = TsvReader::from_file(dir.write("quote.csv", "h\n0\t\"" + long_row + "\n1\tok\n"));
  REQUIRE(quoted.next(record));
  REQUIRE(quoted.next(record));
  CHECK(record.runaway_quote);
  REQUIRE(quoted.next(record));
  CHECK(record.fields == Fields{"1", "ok"});
}

TEST_CASE("the first rows of a huge file are read without reading the rest", "[tsv_reader]") {
  mtbert::test::TempDir dir;
  const auto path = dir.write("huge.csv", "h\tv\n0\ta\n1\tb\n");
  std::error_code ec;
  std::filesystem::resize_file(path, 8ull << 30, ec);  // sparse: no disk is used
  if (ec) MTBERT_SKIP("cannot make a sparse 8 GiB file here: " + ec.message());
  TsvReader reader = TsvReader::from_file(path);
  TsvRecord record;
  REQUIRE(reader.next(record));
  REQUIRE(reader.next(record));
  CHECK(record.fields == Fields{"0", "a"});
  REQUIRE(reader.next(record));
  CHECK(record.fields == Fields{"1", "b"});
}
