// Every reader of a file a user hands mtbert, fed mutated copies of valid
// inputs (test/support/mutator.h). A reader may accept a copy or refuse it
// with a UserError (one line naming the problem); any other exception is a
// bug, as is a crash (the test process dies), a case that runs past its time
// (SIGALRM ends the process naming the case) or an allocation beyond the
// memory limit set here (bad_alloc). A failure names the reader and the case's
// seed; the input that failed is kept in the test's temp folder's parent as
// mtbert-fuzz-<reader>-<case>.bin. MTBERT_FUZZ_CASES sets the cases per reader.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "config/experiment_config.h"
#include "core/json_file.h"
#include "core/safetensors.h"
#include "core/user_error.h"
#include "data/mlm_corpus.h"
#include "data/task_data.h"
#include "data/task_spec.h"
#include "models/model_config.h"
#include "support/mutator.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "sweep/sweep_spec.h"
#include "text/tokenizer.h"
#include "text/wordpiece_tokenizer.h"
#include "train/run_status.h"
#include "train/train_progress.h"

namespace fs = std::filesystem;

namespace {

constexpr unsigned kSecondsPerCase = 10;
char g_case[160] = "";

extern "C" void on_alarm(int) {
  const char prefix[] = "FUZZ CASE RAN PAST ITS TIME: ";
  ssize_t ignored = ::write(2, prefix, sizeof prefix - 1);
  ignored = ::write(2, g_case, std::strlen(g_case));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  std::_Exit(3);
}

// Allocations beyond 2 GB more than the process holds now fail (bad_alloc),
// whatever the input asks for.
void limit_memory() {
  std::ifstream status("/proc/self/status");
  std::string line;
  long data_kb = 0;
  while (std::getline(status, line))
    if (line.rfind("VmData:", 0) == 0) data_kb = std::stol(line.substr(7));
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(data_kb) * 1024 + (2ull << 30);
  ::setrlimit(RLIMIT_DATA, &limit);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Runs `read` on mutated copies of each seed input.
void fuzz(const std::string& reader, const std::vector<std::string>& seeds,
          const std::function<void(const std::string&)>& read, int cases = mtbert::test::fuzz_cases(200)) {
  limit_memory();
  std::signal(SIGALRM, on_alarm);
  int accepted = 0, refused = 0;
  for (int i = 0; i < cases; ++i) {
    const uint64_t seed = 0x5eed0000ull + static_cast<uint64_t>(i);
    const std::string input = mtbert::test::Mutator(seed).mutate(seeds[static_cast<size_t>(i) % seeds.size()]);
    std::snprintf(g_case, sizeof g_case, "%s case %d (seed 0x%llx)", reader.c_str(), i,
                  static_cast<unsigned long long>(seed));
    const fs::path kept = fs::temp_directory_path() / ("mtbert-fuzz-" + reader + "-" + std::to_string(i) + ".bin");
    std::string failure;
    ::alarm(kSecondsPerCase);
    try {
      read(input);
      ++accepted;
    } catch (const mtbert::UserError& e) {
      ++refused;
      if (std::string(e.what()).empty()) failure = "an empty UserError";
    } catch (const std::exception& e) {
      failure = std::string("not a UserError: ") + e.what();
    }
    ::alarm(0);
    if (!failure.empty()) {
      write_file(kept, input);
      FAIL(g_case << ": " << failure << " (input kept in " << kept.string() << ")");
    }
  }
  std::cout << reader << ": " << cases << " mutated inputs, " << accepted << " accepted, " << refused
            << " refused with one line\n";
  CHECK(accepted + refused == cases);
}

}  // namespace

TEST_CASE("fuzz: experiment configs (YAML) and sweep files", "[fuzz]") {
  mtbert::test::TempDir dir;
  const fs::path source = mtbert::test::source_dir();
  const std::string resolved =
      mtbert::resolved_yaml(mtbert::load_experiment(source / "experiments" / "quickstart.yaml"));
  fuzz("experiment", {resolved, read_file(source / "experiments" / "small.yaml") + "\ntasks: {sst: {train: a.csv}}\n"},
       [&](const std::string& text) {
         write_file(dir / "x.yaml", text);
         mtbert::load_experiment(dir / "x.yaml");
       });
  fuzz("sweep", {read_file(source / "experiments" / "sweeps" / "example.yaml")}, [&](const std::string& text) {
    write_file(dir / "s.yaml", text);
    mtbert::load_sweep(dir / "s.yaml");
  });
}

TEST_CASE("fuzz: config.json, state.json and summary.json", "[fuzz]") {
  const std::string config_json = read_file(mtbert::test::fixtures_dir() / "models" / "bert-legacy" / "config.json");
  fuzz("config.json", {config_json}, [](const std::string& text) {
    mtbert::model_config_from_json(mtbert::parse_json_text(text, "config.json"), "config.json").validate("config.json");
  });

  mtbert::TrainProgress progress;
  progress.epoch = 2;
  progress.global_step = 9;
  progress.best_step = 4;
  progress.best_score = 0.5;
  progress.streams["sst"] = mtbert::BatchStream::State{1, 2};
  progress.interval_losses["sst"] = {0.5, 2};
  fuzz("state.json", {mtbert::to_json(progress).dump(2)}, [](const std::string& text) {
    mtbert::train_progress_from_json(mtbert::parse_json_text(text, "state.json"), "state.json");
  });

  mtbert::test::TempDir dir;
  const std::string summary = R"({"best": {"dev": {"sst": {"metric": "accuracy", "value": 0.5}}, "epoch": 1,
    "overall": 0.4, "step": 3}, "name": "q", "status": "finished", "steps": 3, "tags": ["a"], "test": {},
    "train_seconds": 1.5})";
  fuzz("summary.json", {summary}, [&](const std::string& text) {
    write_file(dir / "summary.json", text);
    mtbert::inspect_run(dir.path());
  });
}

TEST_CASE("fuzz: task files (TSV)", "[fuzz]") {
  mtbert::test::TempDir dir;
  const fs::path data = mtbert::test::source_dir() / "experiments" / "data" / "quickstart";
  auto head = [](const fs::path& file) {
    std::ifstream in(file);
    std::string line, text;
    for (int i = 0; i < 20 && std::getline(in, line); ++i) text += line + "\n";
    return text;
  };
  const std::vector<std::pair<std::string, fs::path>> files = {
      {"sst", data / "ids-sst-train.csv"}, {"para", data / "quora-dev-split-train.csv"}, {"sts", data / "sts-train.csv"}};
  for (const auto& [task, file] : files) {
    fuzz("tsv-" + task, {head(file)}, [&, task = task](const std::string& text) {
      write_file(dir / "t.csv", text);
      mtbert::ReadOptions options;
      mtbert::read_task_split(mtbert::builtin_task(task), dir / "t.csv", options);
      options.on_bad_row = mtbert::BadRowPolicy::skip;
      options.require_labels = false;
      mtbert::read_task_split(mtbert::builtin_task(task), dir / "t.csv", options);
    });
  }
}

TEST_CASE("fuzz: safetensors files and WordPiece vocabularies", "[fuzz]") {
  mtbert::test::TempDir dir;
  mtbert::write_safetensors(dir / "seed.safetensors",
                            {{"a.weight", torch::randn({3, 4})}, {"b", torch::arange(5)}, {"c", torch::ones({2}, torch::kHalf)}},
                            {{"format", "pt"}});
  fuzz("safetensors", {read_file(dir / "seed.safetensors")}, [&](const std::string& bytes) {
    write_file(dir / "m.safetensors", bytes);
    mtbert::read_safetensors(dir / "m.safetensors");
  });
  std::string vocab = read_file(mtbert::test::fixtures_dir() / "models" / "bert-legacy" / "vocab.txt");
  fuzz("vocab.txt", {vocab}, [&](const std::string& text) {
    write_file(dir / "vocab.txt", text);
    mtbert::WordPieceTokenizer::from_vocab_file(dir / "vocab.txt", true);
  });
}

TEST_CASE("fuzz: the pretraining token cache", "[fuzz]") {
  mtbert::test::TempDir dir;
  std::string corpus;
  for (int d = 0; d < 6; ++d) corpus += "the cat sat on the mat .\na dog ran in the park .\n\n";
  write_file(dir / "corpus.txt", corpus);
  const fs::path vocab = mtbert::test::fixtures_dir() / "models" / "bert-legacy" / "vocab.txt";
  const auto tokenizer = mtbert::load_tokenizer(vocab.parent_path());
  const std::vector<mtbert::CorpusSource> sources = {{dir / "corpus.txt", ""}};
  const auto cache = mtbert::TokenCache::open_or_build(dir / "cache", sources, *tokenizer, {vocab}, 16);
  const fs::path folder = cache.folder();
  for (const char* name : {"offsets.i64", "ids.u32"}) {
    const std::string original = read_file(folder / name);
    fuzz(std::string("token-cache-") + name, {original}, [&](const std::string& bytes) {
      write_file(folder / name, bytes);
      mtbert::TokenCache::open_or_build(dir / "cache", sources, *tokenizer, {vocab}, 16);
    });
    write_file(folder / name, original);
  }
}
