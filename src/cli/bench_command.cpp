// mtbert bench: throughput of the encoder, of a multi-task training step and
// of the tokenizer, one JSON line per case on stdout. bench/peer/peer_bench.py
// prints the same lines for eager PyTorch, and bench/compare.py runs both and
// prints the ratios (figures and commands in BENCHMARKS.md).
//
//   encoder_forward  BertModel inference (eval, no autograd) on random ids [B, N], no padding
//   train_step       one training step as the trainer takes it (TrainStep) with
//                    the "mixed" sampler: a batch of each of sst (5 classes),
//                    para (binary) and sts (regression), both pairs encoded
//                    jointly ("cross"), global-norm clipping at 1.0, AdamW
//                    (--precision bf16: forward passes under bf16 autocast).
//                    Examples/s counts 3 * B per step.
//   mlm_step         one masked-LM pretraining step (MlmStep) on [B, N], 15% of
//                    the positions masked, logits only there; the peer is
//                    HuggingFace's BertForMaskedLM (logits everywhere)
//   tokenizer        WordPiece ids with [CLS]/[SEP] of every SST train sentence
//                    (bert-base-uncased's vocabulary), one thread
//
// Each case runs --warmup untimed repetitions, then --steps timed one by one
// (synchronizing CUDA around each); the lines carry the median and the minimum.
// With --paced (one case, one shape, one length) every repetition first waits
// for a line on stdin and then prints {"rep": i, "ms": wall}: bench/compare.py
// uses it to alternate single steps of mtbert and of its peer, so that both
// sides of every pair see the same spell of a shared machine.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>

#include "cli/cli_checks.h"
#include "cli/commands.h"
#include "cli/path_checks.h"
#include "core/json_file.h"
#include "core/op_profile.h"
#include "core/autocast_scope.h"
#include "core/limits.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "data/batching.h"
#include "data/task_data.h"
#include "data/task_spec.h"
#include "models/bert_model.h"
#include "models/masked_lm.h"
#include "models/multitask_model.h"
#include "text/sequence_encoder.h"
#include "text/wordpiece_tokenizer.h"
#include "train/experiment.h"
#include "train/mlm_step.h"
#include "train/step_graphs.h"
#include "train/train_step.h"

namespace mtbert::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::vector<std::string> kCases = {"encoder_forward", "train_step", "mlm_step", "tokenizer"};

struct Shape {
  std::string name;  // "small", "base" or "custom"
  int64_t layers, hidden, heads, intermediate;
};

const Shape kSmall{"small", 4, 256, 4, 1024};
const Shape kBase{"base", 12, 768, 12, 3072};

struct BenchArgs {
  std::vector<std::string> cases;
  std::string preset = "all";
  int64_t layers = 0, hidden = 0, heads = 0, intermediate = 0;  // 0: the preset's
  std::vector<int64_t> lengths;
  int64_t batch = 16;
  int steps = 5;
  int warmup = 1;
  int threads = 0;
  std::string device = "cpu";
  std::string precision = "fp32";
  double weight_decay = 0.01;
  double lr = 1e-5;
  int64_t vocab_size = 30522;
  std::string data;
  bool paced = false;
  bool profile = false;
  bool tf32 = false;  // CUDA fp32 products in TF32
  bool per_task_passes = false;  // train_step: train.join_tasks false
  bool cuda_graphs = false;      // train_step, encoder_forward: train.cuda_graphs
  // "absolute": BERT. Otherwise DeBERTa's position terms ("c2p|p2c",
  // "c2p|p2c|p2p", ...) on a DeBERTa-v3-style encoder.
  std::string positions = "absolute";
};

// The --positions terms, in order, or empty for "absolute".
std::vector<std::string> position_terms(const std::string& positions) {
  if (positions == "absolute") return {};
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t bar = positions.find('|', start);
    terms.push_back(positions.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    const std::string& term = terms.back();
    if (term != "c2p" && term != "p2c" && term != "p2p")
      throw UserError(fmt::format("--positions \"{}\": \"{}\" is not a position term (absolute, or c2p, p2c "
                                  "and p2p joined by |)",
                                  positions, term));
    if (bar == std::string::npos) return terms;
    start = bar + 1;
  }
}

struct Context {
  const BenchArgs& args;
  torch::Device device;
  Precision precision;
  json common;  // the fields every line carries
};

// The models to run: the preset(s), or one "custom" shape when any dimension
// is given (the first preset fills the others).
std::vector<Shape> shapes(const BenchArgs& a) {
  std::vector<Shape> presets;
  if (a.preset == "small" || a.preset == "all") presets.push_back(kSmall);
  if (a.preset == "base" || a.preset == "all") presets.push_back(kBase);
  if (a.layers == 0 && a.hidden == 0 && a.heads == 0 && a.intermediate == 0) return presets;
  Shape s = presets.front();
  s.name = "custom";
  if (a.layers > 0) s.layers = a.layers;
  if (a.hidden > 0) s.hidden = a.hidden;
  if (a.heads > 0) s.heads = a.heads;
  if (a.intermediate > 0) s.intermediate = a.intermediate;
  return {s};
}

ModelConfig model_config(const Shape& s, const BenchArgs& a) {
  ModelConfig c;
  c.vocab_size = a.vocab_size;
  c.num_hidden_layers = s.layers;
  c.hidden_size = s.hidden;
  c.num_attention_heads = s.heads;
  c.intermediate_size = s.intermediate;
  const auto terms = position_terms(a.positions);
  // DeBERTa-v3's options, as bench/relpos_bench.cpp's step (token types kept:
  // the pair batches carry them).
  if (!terms.empty()) use_deberta_v3_attention(c, terms);
  return c;
}

void sync(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double rounded(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Milliseconds of each timed repetition: wall clock, and CPU time of the
// process (all threads), which a busy machine disturbs less.
struct Times {
  std::vector<double> wall, cpu;
  std::vector<OpTime> ops;  // with --profile
};

Times time_repeated(const Context& ctx, const std::function<void()>& run) {
  Times times;
  for (int i = 0; i < ctx.args.warmup + ctx.args.steps; ++i) {
    if (ctx.args.paced) {
      std::string go;
      if (!std::getline(std::cin, go)) throw UserError("--paced: stdin ended before every repetition ran");
    }
    sync(ctx.device);
    const double cpu_start = process_cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    run();
    sync(ctx.device);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ctx.args.paced) {
      fmt::print("{}\n", json_text(json{{"rep", i}, {"ms", rounded(ms, 3)}}));
      std::fflush(stdout);
    }
    if (i < ctx.args.warmup) continue;
    times.wall.push_back(ms);
    times.cpu.push_back(process_cpu_ms() - cpu_start);
  }
  // Profiled apart from the timed repetitions: the profiler's own cost
  // (microseconds per operator) would slow them.
  if (ctx.args.profile) times.ops = profile_ops(run, ctx.args.steps);
  return times;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The operators with the most self time (per repetition) and their share of
// all operators' self time; and how many operator calls a repetition makes
// (each costs host time whatever its work: on a GPU the measure of a step
// bound by its host).
json profile_field(const std::vector<OpTime>& ops) {
  double total = 0, calls = 0;
  for (const auto& op : ops) {
    total += op.self_ms;
    calls += op.calls;
  }
  json top = json::array();
  for (size_t i = 0; i < std::min<size_t>(ops.size(), 15); ++i)
    top.push_back({{"op", ops[i].op}, {"calls", rounded(ops[i].calls, 1)}, {"self_ms", rounded(ops[i].self_ms, 3)},
                   {"share", rounded(total > 0 ? ops[i].self_ms / total : 0, 4)}});
  // Every operator's calls, whatever its time: exact where "top" moves with
  // the machine's load.
  json all_calls = json::object();
  for (const auto& op : ops) all_calls[op.op] = rounded(op.calls, 1);
  return {{"total_self_ms", rounded(total, 3)}, {"total_calls", rounded(calls, 1)}, {"top", top},
          {"calls", all_calls}};
}

json timing_fields(const Context& ctx, const Times& times, double examples, double tokens) {
  const double m = median(times.wall);
  json fields = {{"steps", ctx.args.steps},
                 {"warmup", ctx.args.warmup},
                 {"median_ms", rounded(m, 3)},
                 {"min_ms", rounded(*std::min_element(times.wall.begin(), times.wall.end()), 3)},
                 {"median_cpu_ms", rounded(median(times.cpu), 3)},
                 {"examples_per_s", rounded(examples / (m / 1e3), 2)},
                 {"tokens_per_s", rounded(tokens / (m / 1e3), 1)}};
  if (ctx.args.profile) fields["profile"] = profile_field(times.ops);
  return fields;
}

json shape_fields(const Shape& s, const BenchArgs& a, int64_t length) {
  return {{"model", s.name},         {"layers", s.layers}, {"hidden", s.hidden},
          {"heads", s.heads},        {"intermediate", s.intermediate}, {"vocab", a.vocab_size},
          {"batch", a.batch},        {"length", length},                {"positions", a.positions}};
}

// Random ids (no special or padding ids: those are below 1000 in BERT's
// vocabulary), full mask, and said so (not padded: the encoder runs without a
// mask, as on a batcher's batch of equal lengths); token types 0 then 1 for a
// joint pair. On the CPU, as the trainer's batches are.
TokenBatch random_tokens(const BenchArgs& a, int64_t length, bool pair) {
  TokenBatch t;
  t.input_ids = torch::randint(std::min<int64_t>(1000, a.vocab_size - 1), a.vocab_size, {a.batch, length}, torch::kLong);
  t.attention_mask = torch::ones({a.batch, length}, torch::kLong);
  t.token_type_ids = torch::zeros({a.batch, length}, torch::kLong);
  if (pair) t.token_type_ids.narrow(1, length / 2, length - length / 2).fill_(1);
  t.padded = false;
  return t;
}

json bench_encoder_forward(const Context& ctx, const Shape& shape, int64_t length) {
  const BenchArgs& a = ctx.args;
  BertModel model(model_config(shape, a));
  model->initialize_weights();
  model->to(ctx.device);
  model->eval();
  const TokenBatch t = random_tokens(a, length, /*pair=*/false).to(ctx.device);
  const auto forward = [&] {
    c10::InferenceMode inference;  // no autograd records, no version counters
    const AutocastScope autocast(ctx.device, ctx.precision == Precision::bf16);
    model(t.input_ids, t.encoder_mask(), t.token_type_ids);
  };
  // As an evaluation pass over many batches: bf16 weights cast once; in a
  // graph, as an evaluation's, at every replay (train/step_graphs.h).
  std::optional<WeightCastCache> weight_casts;
  std::unique_ptr<StepGraphs> graphs;
  std::function<void()> run = forward;
  if (a.cuda_graphs) {
    graphs = make_step_graphs(ctx.device, "the benchmark's forward");
    run = [&] { graphs->run("forward", forward); };
    // The warm-ups and the capture come before any --warmup repetition.
    for (int i = 0; i <= kStepGraphWarmups; ++i) run();
  } else {
    weight_casts.emplace();
  }
  const auto times = time_repeated(ctx, run);
  json line = {{"case", "encoder_forward"}, {"precision", a.precision}};
  line.update(shape_fields(shape, a, length));
  if (a.cuda_graphs) line.update({{"cuda_graphs", true}, {"graphs", graphs->graphs()}});
  line.update(timing_fields(ctx, times, a.batch, a.batch * length));
  return line;
}

// The base experiment's tasks (experiments/base.yaml): pairs encoded jointly,
// CLS pooling, dropout 0.3, as the trainer builds them.
std::vector<TaskConfig> bench_tasks() {
  std::vector<TaskConfig> tasks;
  for (const char* name : {"sst", "para", "sts"}) {
    TaskConfig t;
    t.name = t.type = name;
    t.dropout = 0.3;
    tasks.push_back(t);
  }
  return tasks;
}

TaskBatch random_task_batch(const BenchArgs& a, const HeadSpec& head, int64_t length) {
  TaskBatch batch;
  batch.task = head.task;
  batch.segments.push_back(random_tokens(a, length, head.pair_mode == PairMode::cross));
  switch (head.target) {
    case TaskTarget::classes: batch.labels = torch::randint(0, head.num_classes, {a.batch}).to(torch::kFloat); break;
    case TaskTarget::binary: batch.labels = torch::randint(0, 2, {a.batch}).to(torch::kFloat); break;
    case TaskTarget::regression: batch.labels = torch::rand({a.batch}) * 5; break;
  }
  for (int64_t i = 0; i < a.batch; ++i) batch.indices.push_back(i);
  return batch;
}

// The trainer's step (train/train_step.h) with the mixed sampler's batches:
// one of each task (one encoder pass over them), then the optimizer step at a
// constant LR factor of 1.
json bench_train_step(const Context& ctx, const Shape& shape, int64_t length) {
  const BenchArgs& a = ctx.args;
  const auto tasks = bench_tasks();
  std::vector<HeadSpec> heads;
  for (const auto& task : tasks) heads.push_back(head_spec(task, builtin_task(task.type)));
  BertModel encoder(model_config(shape, a));
  encoder->initialize_weights();
  MultitaskModel model(encoder, heads);
  model->to(ctx.device);
  model->train();

  TrainSection train;
  train.lr = a.lr;
  train.weight_decay = a.weight_decay;
  train.grad_clip = 1.0;
  train.join_tasks = !a.per_task_passes;
  train.cuda_graphs = a.cuda_graphs;
  TrainStep step(model, tasks, train, ctx.precision, ctx.device, /*total_steps=*/1);
  std::mt19937_64 rng(0);

  std::vector<TaskBatch> batches;
  for (const auto& head : heads) batches.push_back(random_task_batch(a, head, length));
  const auto one_step = [&] {
    step.accumulate(batches);
    step.apply(1.0, /*step=*/0, rng);
  };
  // With graphs, the steps that warm up and capture them come before any
  // --warmup repetition: the timed ones are replays.
  if (a.cuda_graphs)
    for (int i = 0; i <= kStepGraphWarmups; ++i) one_step();
  const auto times = time_repeated(ctx, one_step);
  const int64_t examples = static_cast<int64_t>(batches.size()) * a.batch;
  json line = {{"case", "train_step"}, {"precision", a.precision}};
  line.update(shape_fields(shape, a, length));
  line.update({{"tasks", batches.size()}, {"examples_per_step", examples}, {"join_tasks", train.join_tasks}});
  if (a.cuda_graphs) line.update({{"cuda_graphs", true}, {"graphs", step.captured_graphs()}});
  line.update(timing_fields(ctx, times, static_cast<double>(examples), static_cast<double>(examples * length)));
  return line;
}

// One pretraining step (train/mlm_step.h): 15% of the [B, N] positions
// masked (the peer's draw), logits only there, clipping at 1.0, AdamW.
json bench_mlm_step(const Context& ctx, const Shape& shape, int64_t length) {
  const BenchArgs& a = ctx.args;
  MaskedLm model(model_config(shape, a));
  model->to(ctx.device);
  model->train();
  PretrainTrainSection train;
  train.lr = a.lr;
  train.weight_decay = a.weight_decay;
  MlmStep step(model, train, ctx.precision, ctx.device);

  MaskedBatch batch;
  batch.inputs = random_tokens(a, length, /*pair=*/false);
  const auto count = std::max<int64_t>(1, std::llround(0.15 * static_cast<double>(a.batch * length)));
  batch.positions = torch::randperm(a.batch * length, at::detail::createCPUGenerator(1234), torch::kLong)
                        .narrow(0, 0, count);
  batch.labels = batch.inputs.input_ids.view(-1).index_select(0, batch.positions);
  const auto times = time_repeated(ctx, [&] {
    step.accumulate(batch);
    step.apply(1.0);
  });
  json line = {{"case", "mlm_step"}, {"precision", a.precision}};
  line.update(shape_fields(shape, a, length));
  line.update({{"masked", count}});
  line.update(timing_fields(ctx, times, static_cast<double>(a.batch), static_cast<double>(a.batch * length)));
  return line;
}

json bench_tokenizer(const Context& ctx) {
  const BenchArgs& a = ctx.args;
  const fs::path data = fs::path(a.data) / "ids-sst-train.csv";
  const fs::path vocab = fs::path(a.data) / "bert-base-uncased" / "vocab.txt";
  if (!fs::exists(data) || !fs::exists(vocab))
    return {{"case", "tokenizer"}, {"skipped", fmt::format("needs {} and {}", data.string(), vocab.string())}};
  const TaskSplit split = read_task_split(builtin_task("sst"), data, ReadOptions{});
  const auto tokenizer = WordPieceTokenizer::from_vocab_file(vocab, /*lower_case=*/true);
  int64_t tokens = 0;
  const auto times = time_repeated(ctx, [&] {
    tokens = 0;
    for (const auto& example : split.examples)
      tokens += static_cast<int64_t>(encode_single(*tokenizer, example.text_a, 0).ids.size());
  });
  const double m = median(times.wall);
  const double sentences = static_cast<double>(split.examples.size());
  return {{"case", "tokenizer"},
          {"data", data.filename().string()},
          {"sentences", split.examples.size()},
          {"tokens", tokens},
          {"steps", a.steps},
          {"warmup", a.warmup},
          {"median_ms", rounded(m, 3)},
          {"min_ms", rounded(*std::min_element(times.wall.begin(), times.wall.end()), 3)},
          {"sentences_per_s", rounded(sentences / (m / 1e3), 1)},
          {"tokens_per_s", rounded(static_cast<double>(tokens) / (m / 1e3), 1)}};
}

void check_args(const BenchArgs& a) {
  const size_t model_cases = std::count_if(a.cases.begin(), a.cases.end(), [](const auto& c) { return c != "tokenizer"; });
  const size_t lines = (a.cases.size() - model_cases) + model_cases * shapes(a).size() * a.lengths.size();
  if (a.paced && lines != 1)
    throw UserError(fmt::format("--paced needs exactly one case, model and length ({} lines requested)", lines));
  position_terms(a.positions);
  for (const auto& s : shapes(a)) {
    if (s.hidden % s.heads != 0)
      throw UserError(fmt::format("--hidden {} is not a multiple of --heads {}", s.hidden, s.heads));
  }
  const ModelConfig defaults;
  for (const int64_t n : a.lengths) {
    if (n > defaults.max_position_embeddings)
      throw UserError(fmt::format("--length {} exceeds the {} positions of a BERT encoder", n,
                                  defaults.max_position_embeddings));
  }
}

void run_bench(BenchArgs& a) {
  if (a.cases.empty()) a.cases = kCases;
  if (a.lengths.empty()) a.lengths = {64, 128};
  if (a.data.empty()) {
    const char* env = std::getenv("MTBERT_DATA");
    a.data = env && *env ? env : "../shared/data";
  }
  check_args(a);
  const int threads = set_thread_count(a.threads);
  torch::manual_seed(0);
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  Context ctx{a, resolve_device(*enum_from_name<DeviceChoice>(a.device)), *enum_from_name<Precision>(a.precision),
              {{"impl", "mtbert"},
               {"threads", threads},
               {"torch_version", torch_version_string()},
               {"omp_wait_policy", policy ? policy : ""}}};
  ctx.common["device"] = ctx.device.str();
  if (a.cuda_graphs && !ctx.device.is_cuda())
    throw UserError(fmt::format("--cuda-graphs is a CUDA setting (the device is {})", ctx.device.str()));
  if (a.tf32) {
    if (!ctx.device.is_cuda()) throw UserError(fmt::format("--tf32 is a CUDA setting (the device is {})", ctx.device.str()));
    // What torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    // set in Python: fp32 tensors, products on the tensor cores in TF32.
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
    ctx.common["tf32"] = true;
  }
  if (ctx.precision == Precision::bf16) {
    const std::string emulated = bf16_emulation_warning(ctx.device);
    if (!emulated.empty()) spdlog::warn("{}", emulated);
  }

  for (const auto& name : a.cases) {
    std::vector<json> lines;
    if (name == "tokenizer") {
      lines.push_back(bench_tokenizer(ctx));
    } else {
      for (const auto& shape : shapes(a))
        for (const int64_t length : a.lengths)
          lines.push_back(name == "train_step" ? bench_train_step(ctx, shape, length)
                          : name == "mlm_step" ? bench_mlm_step(ctx, shape, length)
                                               : bench_encoder_forward(ctx, shape, length));
    }
    for (auto& line : lines) {
      line.update(ctx.common);
      fmt::print("{}\n", json_text(line));
      std::fflush(stdout);
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Throughput benchmarks (encoder, training step, tokenizer); JSON lines");
  cmd->add_option("--case", args->cases, "Cases to run (default: all)")->check(CLI::IsMember(kCases));
  cmd->add_option("--preset", args->preset, "Model shape: small (4x256, 4 heads, FFN 1024), base (bert-base) or all")
      ->check(CLI::IsMember({"small", "base", "all"}));
  cmd->add_option("--layers", args->layers, "Encoder layers (overrides the preset)")
      ->check(whole_number(1, limits::kLayers));
  cmd->add_option("--hidden", args->hidden, "Hidden size (overrides the preset)")
      ->check(whole_number(1, limits::kHiddenSize));
  cmd->add_option("--heads", args->heads, "Attention heads (overrides the preset)")
      ->check(whole_number(1, limits::kAttentionHeads));
  cmd->add_option("--intermediate", args->intermediate, "FFN size (overrides the preset)")
      ->check(whole_number(1, limits::kIntermediateSize));
  cmd->add_option("--length", args->lengths, "Sequence length(s) (default: 64 128)")
      ->check(whole_number(1, limits::kPositions));
  cmd->add_option("--batch", args->batch, "Examples per batch (per task for train_step)")
      ->capture_default_str()
      ->check(whole_number(1, limits::kBatchSize));
  cmd->add_option("--steps", args->steps, "Timed repetitions per case")
      ->capture_default_str()->check(whole_number(1, 1'000'000));
  cmd->add_option("--warmup", args->warmup, "Untimed repetitions first")
      ->capture_default_str()->check(whole_number(0, 1'000'000));
  cmd->add_option("--threads", args->threads, "Intra-op threads (0: one per core)")->check(thread_count());
  cmd->add_option("--device", args->device, "cpu, cuda or auto")
      ->capture_default_str()->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--precision", args->precision, "fp32, or bf16 (autocast, as train's precision: bf16)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fp32", "bf16"}));
  cmd->add_option("--weight-decay", args->weight_decay, "AdamW weight decay (train_step)")
      ->capture_default_str()
      ->check(non_negative_number());
  cmd->add_option("--lr", args->lr, "AdamW learning rate (train_step)")
      ->capture_default_str()->check(positive_number());
  cmd->add_option("--vocab-size", args->vocab_size, "Vocabulary of the random models")
      ->capture_default_str()
      ->check(whole_number(2, limits::kVocabSize));
  cmd->add_option("--data", args->data,
                  "Folder with ids-sst-train.csv and bert-base-uncased/vocab.txt (default: $MTBERT_DATA or "
                  "../shared/data)")
      ->check(existing_folder());
  cmd->add_option("--positions", args->positions,
                  "absolute (BERT), or DeBERTa-v3-style position terms joined by | (c2p|p2c, c2p|p2c|p2p, ...)")
      ->capture_default_str();
  cmd->add_flag("--paced", args->paced,
                "Before each repetition wait for a line on stdin, after it print its time (one case, model and length)");
  cmd->add_flag("--tf32", args->tf32,
                "CUDA only: fp32 matrix products in TF32 on the tensor cores (as torch.backends.cuda.matmul.allow_tf32)");
  cmd->add_flag("--per-task-passes", args->per_task_passes,
                "train_step: one encoder pass and one backward per task (train.join_tasks: false) instead of one "
                "pass over the three tasks' batches");
  cmd->add_flag("--cuda-graphs", args->cuda_graphs,
                "CUDA only, train_step and encoder_forward: the step or the forward captured in CUDA graphs and "
                "replayed (train.cuda_graphs; the captures run before --warmup)");
  cmd->add_flag("--profile", args->profile,
                "After the timed repetitions, as many again under LibTorch's profiler: each line gets the operators "
                "with the most self time per repetition");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace mtbert::cli
