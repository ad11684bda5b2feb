#include "data/mlm_corpus.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "core/json_file.h"
#include "core/progress_bar.h"
#include "core/remove_tree.h"
#include "core/user_error.h"
#include "core/utf8_check.h"
#include "data/task_data.h"

namespace mtbert {

namespace fs = std::filesystem;

MappedFile::MappedFile(const fs::path& path) {
  check_input_file(path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UserError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  struct stat info {};
  ::fstat(fd, &info);
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw UserError(fmt::format("cannot map {}: {}", path.string(), std::strerror(errno)));
    }
    data_ = p;
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<void*>(data_), size_);
}

namespace {

// FNV-1a, 64 bits: a cache key, not a security boundary.
struct Fnv1a {
  uint64_t h = 14695981039346656037ULL;
  void add(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  }
  void add(const std::string& s) { add(s.data(), s.size() + 1); }
};

void add_file_identity(Fnv1a& hash, const fs::path& path) {
  check_input_file(path);
  hash.add(fs::absolute(path).string());
  hash.add(std::to_string(fs::file_size(path)));
  hash.add(std::to_string(fs::last_write_time(path).time_since_epoch().count()));
}

void add_file_contents(Fnv1a& hash, const fs::path& path) {
  std::ifstream in = open_input_file(path);
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) hash.add(buffer, static_cast<size_t>(in.gcount()));
}

// Streams segments to the two files as lines arrive.
class SegmentWriter {
 public:
  SegmentWriter(const fs::path& dir, int64_t capacity) : ids_(dir / "ids.u32", (dir / "ids.u32").string()), capacity_(capacity) {}

  // One line's ids into the current document's segment.
  void add_line(const std::vector<int64_t>& ids) {
    for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(capacity_)) {
      const size_t end = std::min(ids.size(), start + static_cast<size_t>(capacity_));
      const int64_t n = static_cast<int64_t>(end - start);
      if (static_cast<int64_t>(current_.size()) + n > capacity_) flush();
      current_.insert(current_.end(), ids.begin() + static_cast<std::ptrdiff_t>(start),
                      ids.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  void end_document() { flush(); }

  void finish(const fs::path& dir) {
    flush();
    ids_.finish();
    FileWriter offsets(dir / "offsets.i64", (dir / "offsets.i64").string());
    offsets.write(offsets_.data(), offsets_.size() * sizeof(int64_t));
    offsets.finish();
  }
  int64_t segments() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t tokens() const { return offsets_.back(); }

 private:
  void flush() {
    if (current_.empty()) return;
    for (const int64_t id : current_) {
      const auto v = static_cast<uint32_t>(id);
      ids_.write(&v, sizeof v);
    }
    offsets_.push_back(offsets_.back() + static_cast<int64_t>(current_.size()));
    current_.clear();
  }

  FileWriter ids_;
  int64_t capacity_;
  std::vector<int64_t> current_;
  std::vector<int64_t> offsets_{0};
};

void tokenize_text_file(const fs::path& path, const Tokenizer& tokenizer, SegmentWriter& out, Progress& bar,
                        int64_t& bytes_done) {
  std::ifstream in = open_input_file(path);
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    bytes_done += static_cast<int64_t>(line.size()) + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // The tokenizer would drop the bytes silently; the user should mend them.
    check_utf8_line(line, path.string(), number);
    if (line.find_first_not_of(" \t") == std::string::npos) {
      out.end_document();
      continue;
    }
    out.add_line(tokenizer.encode(line));
    bar.update(bytes_done, "");
  }
  out.end_document();
}

void tokenize_task_file(const CorpusSource& source, const Tokenizer& tokenizer, SegmentWriter& out) {
  ReadOptions options;
  options.on_bad_row = BadRowPolicy::skip;
  const TaskSplit rows = read_task_split(builtin_task(source.task_type), source.path, options);
  for (const auto& example : rows.examples) {
    out.add_line(tokenizer.encode(example.text_a));
    if (!example.text_b.empty()) out.add_line(tokenizer.encode(example.text_b));
    out.end_document();
  }
}

}  // namespace

TokenCache TokenCache::open_or_build(const fs::path& cache_root, const std::vector<CorpusSource>& sources,
                                     const Tokenizer& tokenizer, const std::vector<fs::path>& tokenizer_files,
                                     int64_t max_length) {
  if (sources.empty()) throw UserError("corpus: no sources (give corpus.files and/or corpus.tasks)");
  if (max_length < 3) throw UserError(fmt::format("corpus: max_length {} leaves no room for tokens", max_length));
  Fnv1a key;
  key.add(fmt::format("mlm-cache-v1 max_length {}", max_length));
  for (const auto& s : sources) {
    key.add(s.task_type);
    add_file_identity(key, s.path);
  }
  for (const auto& f : tokenizer_files) add_file_contents(key, f);
  const fs::path folder = cache_root / fmt::format("mlm-{:016x}", key.h);

  if (!fs::exists(folder / "offsets.i64")) {
    build(folder, cache_root, sources, tokenizer, max_length);
  } else {
    spdlog::info("corpus: reusing the token cache {}", folder.string());
  }

  TokenCache cache;
  cache.folder_ = folder;
  cache.ids_ = std::make_shared<MappedFile>(folder / "ids.u32");
  cache.offsets_ = std::make_shared<MappedFile>(folder / "offsets.i64");
  cache.validate(max_length, tokenizer.vocab_size());
  return cache;
}

void TokenCache::build(const fs::path& folder, const fs::path& cache_root, const std::vector<CorpusSource>& sources,
                       const Tokenizer& tokenizer, int64_t max_length) {
  const fs::path tmp = cache_root / fmt::format("{}.tmp-{}", folder.filename().string(), ::getpid());
  std::error_code ec;
  remove_tree(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  try {
    int64_t total_bytes = 0, bytes_done = 0;
    for (const auto& s : sources) total_bytes += static_cast<int64_t>(fs::file_size(s.path));
    SegmentWriter writer(tmp, max_length - 2);
    {
      Progress bar("tokenizing the corpus (bytes)", total_bytes);
      for (const auto& s : sources) {
        if (s.task_type.empty()) {
          tokenize_text_file(s.path, tokenizer, writer, bar, bytes_done);
        } else {
          tokenize_task_file(s, tokenizer, writer);
          bytes_done += static_cast<int64_t>(fs::file_size(s.path));
          bar.update(bytes_done, "");
        }
      }
      writer.finish(tmp);
      bar.finish(fmt::format("{} segments, {} tokens", writer.segments(), writer.tokens()));
    }
    if (writer.segments() == 0) {
      std::string names;
      for (const auto& s : sources) names += (names.empty() ? "" : ", ") + s.path.string();
      throw UserError(fmt::format("corpus: the sources hold no text ({}); give files with text", names));
    }
    nlohmann::json meta = {{"max_length", max_length}, {"segments", writer.segments()}, {"tokens", writer.tokens()},
                           {"sources", nlohmann::json::array()}};
    for (const auto& s : sources) meta["sources"].push_back({{"path", s.path.string()}, {"task", s.task_type}});
    write_text_atomically(tmp / "meta.json", json_text(meta, 2) + "\n");
  } catch (...) {
    remove_tree(tmp, ec);
    throw;
  }
  fs::rename(tmp, folder, ec);
  // Another process may have built the same cache meanwhile: keep theirs.
  if (ec) remove_tree(tmp, ec);
}

void TokenCache::validate(int64_t max_length, int64_t vocab_size) {
  const std::string damaged = fmt::format("; the token cache is damaged: remove {} to rebuild it", folder_.string());
  const std::string offsets_file = (folder_ / "offsets.i64").string(), ids_file = (folder_ / "ids.u32").string();
  if (offsets_->size() % sizeof(int64_t) != 0 || offsets_->size() < 2 * sizeof(int64_t))
    throw UserError(fmt::format("{}: {} bytes is not a whole number of offsets, two at least{}", offsets_file,
                                offsets_->size(), damaged));
  segments_ = static_cast<int64_t>(offsets_->size() / sizeof(int64_t)) - 1;
  const auto* offsets = static_cast<const int64_t*>(offsets_->data());
  if (offsets[0] != 0) throw UserError(fmt::format("{}: the first offset is {}, not 0{}", offsets_file, offsets[0], damaged));
  for (int64_t i = 1; i <= segments_; ++i) {
    const int64_t length = offsets[i] - offsets[i - 1];
    if (length < 1 || length > max_length - 2)
      throw UserError(fmt::format("{}: offset {} is {} after {}: segments hold 1 to {} tokens{}", offsets_file, i,
                                  offsets[i], offsets[i - 1], max_length - 2, damaged));
  }
  tokens_ = offsets[segments_];
  if (static_cast<uint64_t>(tokens_) * sizeof(uint32_t) != ids_->size())
    throw UserError(fmt::format("{}: {} bytes, but the offsets count {} tokens of 4 bytes{}", ids_file, ids_->size(),
                                tokens_, damaged));
  const auto* ids = static_cast<const uint32_t*>(ids_->data());
  for (int64_t k = 0; k < tokens_; ++k)
    if (static_cast<int64_t>(ids[k]) >= vocab_size)
      throw UserError(fmt::format("{}: token {} has id {}, not below the vocabulary's {} pieces{}", ids_file, k, ids[k],
                                  vocab_size, damaged));
}

const uint32_t* TokenCache::segment(int64_t i, int64_t* length) const {
  const auto* offsets = static_cast<const int64_t*>(offsets_->data());
  *length = offsets[i + 1] - offsets[i];
  return static_cast<const uint32_t*>(ids_->data()) + offsets[i];
}

}  // namespace mtbert
