#pragma once
// The masked-language-model corpus as a token cache: every segment's token
// ids (no [CLS]/[SEP]) in one file of uint32, and the segments' offsets in
// another, both memory-mapped, so that a corpus far larger than memory is
// tokenized once, streamed to disk, and read back by the page cache.
//
// Sources are plain text files, BERT's layout (a sentence or paragraph per
// line, a blank line between documents), and task files (each example a
// document: its one or two sentences). A segment packs consecutive lines of
// one document while they fit in max_length - 2 tokens (room for [CLS] and
// [SEP]); a line longer than that is cut into pieces of that size.
//
// The cache lives in <cache_root>/mlm-<key>/, where the key hashes the
// sources (path, size, modification time), the tokenizer's files and
// max_length: the same corpus and tokenizer reuse it; any change builds a new
// one. It is built in a temporary folder and renamed into place.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "data/task_spec.h"
#include "text/tokenizer.h"

namespace mtbert {

struct CorpusSource {
  std::filesystem::path path;
  // Empty: a plain text file; else a task file read with this task's spec
  // (its train rows' sentences; malformed rows skipped).
  std::string task_type;
};

// A read-only memory mapping of a whole file.
class MappedFile {
 public:
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
};

class TokenCache {
 public:
  // Opens the cache of `sources` under `cache_root`, building it first when
  // absent (with a progress bar). `tokenizer_files`: the files the tokenizer
  // was loaded from (part of the key). The cache is checked whole before it
  // is used (offsets rising from 0, segments of 1 to max_length - 2 tokens,
  // every id below the tokenizer's vocabulary): a damaged one is a UserError
  // saying to remove it. Sources with no text are a UserError, and a failed
  // build leaves nothing behind.
  static TokenCache open_or_build(const std::filesystem::path& cache_root, const std::vector<CorpusSource>& sources,
                                  const Tokenizer& tokenizer, const std::vector<std::filesystem::path>& tokenizer_files,
                                  int64_t max_length);

  int64_t segments() const { return segments_; }
  int64_t tokens() const { return tokens_; }
  // Segment i's ids: [begin, begin + length).
  const uint32_t* segment(int64_t i, int64_t* length) const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  static void build(const std::filesystem::path& folder, const std::filesystem::path& cache_root,
                    const std::vector<CorpusSource>& sources, const Tokenizer& tokenizer, int64_t max_length);
  void validate(int64_t max_length, int64_t vocab_size);

  std::filesystem::path folder_;
  std::shared_ptr<MappedFile> ids_, offsets_;
  int64_t segments_ = 0, tokens_ = 0;
};

}  // namespace mtbert
