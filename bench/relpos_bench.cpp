// Benchmarks of disentangled attention's relative-position term, one JSON line
// per case (figures and commands in BENCHMARKS.md, "Disentangled attention"):
//
//   op       scores from the two [B,H,N,S] position GEMMs by three methods,
//            forward and backward, N = 64..512 with k = 256 and with
//            DeBERTa-v3's log buckets (256, max 512):
//              loops   the report's Algorithm 1, literally: per-element loops
//                      with ATen indexing (one (b, h) slice; too slow for more)
//              gather  the public implementations' approach: torch::gather of
//                      each [B,H,N,N] term from the GEMM results, then adds
//              mtbert  mtbert::disentangled_scores
//            time: median over repeats, per (b, h) slice too; memory: peak
//            CPU bytes allocated beyond the inputs (output and gradients
//            included), measured by a counting allocator.
//   step     one training step (forward, backward, AdamW) of a 4-layer,
//            256-wide encoder at N = 128 (or each --length, B = 4096 / N):
//            BERT against DeBERTa-style, as it runs (banded position GEMMs
//            where they pay) and with the full products always; with --p2p
//            also DeBERTa-style with all four terms (c2p|p2c|p2p), paired
//            against the c2p|p2c model: the step cost of the p2p term.
//
//   mtbert_bench_relpos [--quick] [--clamped] [--p2p] [--profile] [--threads T] [--only op|step] [--length N]...
//
// --profile adds, per model of the step case, its operators by self time
// (LibTorch's profiler over 3 more steps).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/op_profile.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "counting_allocator.h"
#include "models/bert_model.h"
#include "models/relative_position.h"
#include "ops/disentangled_scores.h"

using namespace mtbert;

namespace {

struct Measurement {
  double median_ms = 0;      // wall clock
  double median_cpu_ms = 0;  // CPU time of the process (all threads)
  int64_t peak_bytes = 0;
  std::vector<double> rounds_ms;  // wall clock of each timed round
};

struct Candidate {
  std::function<void()> setup;  // untimed, before each run
  std::function<void()> run;
};

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Runs the candidates in turn, `repeats` rounds after two warm-up rounds, so
// that a slow spell of the machine hits all of them alike; medians per candidate.
std::vector<Measurement> measure(bench::CountingAllocator& memory, int repeats,
                                 const std::vector<Candidate>& candidates) {
  std::vector<std::vector<double>> wall(candidates.size()), cpu(candidates.size());
  std::vector<Measurement> result(candidates.size());
  for (int r = 0; r < repeats + 2; ++r) {
    for (size_t c = 0; c < candidates.size(); ++c) {
      candidates[c].setup();
      const int64_t before = memory.live();
      memory.reset_peak();
      const double cpu_start = cpu_ms();
      const auto start = std::chrono::steady_clock::now();
      candidates[c].run();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      const double cpu_used = cpu_ms() - cpu_start;
      result[c].peak_bytes = std::max(result[c].peak_bytes, memory.peak() - before);
      if (r >= 2) {
        wall[c].push_back(ms);
        cpu[c].push_back(cpu_used);
      }
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (size_t c = 0; c < candidates.size(); ++c) {
    result[c].rounds_ms = wall[c];
    result[c].median_ms = median(wall[c]);
    result[c].median_cpu_ms = median(cpu[c]);
  }
  return result;
}

const std::function<void()> kNoSetup = [] {};

torch::Tensor row_matrix(const torch::Tensor& index, int64_t n) {
  auto i = torch::arange(n, torch::kLong).unsqueeze(1), j = torch::arange(n, torch::kLong).unsqueeze(0);
  return index.index({i - j + n - 1});
}

// The public implementations' formulation (HF DebertaV2): gather both terms.
torch::Tensor gather_scores(const torch::Tensor& content, const torch::Tensor& c2p, const torch::Tensor& p2c,
                            const torch::Tensor& rows, const torch::Tensor& bias) {
  const auto shape = content.sizes();
  auto index = rows.expand(shape);
  auto c2p_g = torch::gather(c2p, -1, index);
  auto p2c_g = torch::gather(p2c, -1, index.transpose(-1, -2)).transpose(-1, -2);
  return content + c2p_g + p2c_g + bias;
}

// The report's Algorithm 1, literally, with ATen indexing.
torch::Tensor loop_scores(const torch::Tensor& content, const torch::Tensor& c2p, const torch::Tensor& p2c,
                          const std::vector<int64_t>& rows, const torch::Tensor& bias) {
  const int64_t B = content.size(0), H = content.size(1), N = content.size(2);
  auto out = content + bias;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const int64_t r = rows[i * N + j];
          out[b][h][i][j] += c2p[b][h][i][r] + p2c[b][h][j][r];
        }
  return out;
}

void loop_backward(const torch::Tensor& grad, const std::vector<int64_t>& rows, torch::Tensor& grad_c2p,
                   torch::Tensor& grad_p2c) {
  const int64_t B = grad.size(0), H = grad.size(1), N = grad.size(2);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const int64_t r = rows[i * N + j];
          auto g = grad[b][h][i][j];
          grad_c2p[b][h][i][r] += g;
          grad_p2c[b][h][j][r] += g;
        }
}

void print_case(const std::string& method, const std::string& pass, const std::string& positions, int64_t B,
                int64_t H, int64_t N, int64_t k, int64_t span, const Measurement& m) {
  fmt::print(
      "{{\"bench\": \"relpos_op\", \"method\": \"{}\", \"pass\": \"{}\", \"positions\": \"{}\", \"B\": {}, "
      "\"H\": {}, \"N\": {}, \"k\": {}, \"span\": {}, \"median_ms\": {:.3f}, \"cpu_ms\": {:.3f}, "
      "\"ms_per_head\": {:.4f}, \"peak_bytes\": {}}}\n",
      method, pass, positions, B, H, N, k, span, m.median_ms, m.median_cpu_ms, m.median_ms / (B * H), m.peak_bytes);
  std::fflush(stdout);
}

void bench_op(bench::CountingAllocator& memory, bool quick, std::vector<int64_t> lengths) {
  const int64_t B = quick ? 2 : 4, H = 12, k = 256;
  if (lengths.empty()) lengths = quick ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{64, 128, 256, 512};
  for (const bool buckets : {false, true}) {
    ModelConfig config;
    config.model_type = "deberta-v2";
    config.relative_attention = true;
    config.pos_att_type = {"c2p", "p2c"};
    config.max_relative_positions = buckets ? 512 : k;
    config.position_buckets = buckets ? k : -1;
    RelativePositionCache cache(config);
    const std::string positions = buckets ? "log_buckets_256_max_512" : "clamped_k_256";
    for (const int64_t N : lengths) {
      const RelativePositions rel = cache.get(N, torch::kCPU);
      const int64_t S = rel.span;
      torch::manual_seed(0);
      auto content = torch::randn({B, H, N, N});
      auto c2p = torch::randn({B, H, N, S}), p2c = torch::randn({B, H, N, S});
      auto bias = torch::zeros({B, 1, 1, N});
      auto rows = row_matrix(rel.plan->index(), N);
      const int repeats = quick ? 3 : 15;

      // Forward.
      auto forward = measure(memory, repeats,
                             {{kNoSetup,
                               [&] {
                                 torch::NoGradGuard g;
                                 ops::disentangled_scores(content, c2p, p2c, rel.plan, 1.0, bias);
                               }},
                              {kNoSetup, [&] {
                                 torch::NoGradGuard g;
                                 gather_scores(content, c2p, p2c, rows, bias);
                               }}});
      print_case("mtbert", "forward", positions, B, H, N, k, S, forward[0]);
      print_case("gather", "forward", positions, B, H, N, k, S, forward[1]);

      // Backward: gradients of content, c2p and p2c from a given score gradient.
      auto grad = torch::randn({B, H, N, N});
      std::vector<torch::Tensor> outs(2);
      auto backward_of = [&](int method) {
        return Candidate{[&, method] {
                           auto c = content.clone().requires_grad_(true), cp = c2p.clone().requires_grad_(true),
                                pc = p2c.clone().requires_grad_(true);
                           outs[method] = method == 0 ? ops::disentangled_scores(c, cp, pc, rel.plan, 1.0, bias)
                                                      : gather_scores(c, cp, pc, rows, bias);
                         },
                         [&, method] { outs[method].backward(grad); }};
      };
      auto backward = measure(memory, repeats, {backward_of(0), backward_of(1)});
      print_case("mtbert", "backward", positions, B, H, N, k, S, backward[0]);
      print_case("gather", "backward", positions, B, H, N, k, S, backward[1]);

      // Algorithm 1 on one (b, h) slice: its cost is per element, and a full
      // batch would take minutes.
      if (N <= (quick ? 64 : 128)) {
        using torch::indexing::Slice;
        auto slice = [](const torch::Tensor& t) { return t.index({Slice(0, 1), Slice(0, 1)}).contiguous(); };
        auto c1 = slice(content), cp1 = slice(c2p), pc1 = slice(p2c), b1 = bias.index({Slice(0, 1)});
        std::vector<int64_t> row_list(rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + N * N);
        print_case("loops", "forward", positions, 1, 1, N, k, S,
                   measure(memory, 1, {{kNoSetup, [&] {
                                          torch::NoGradGuard g;
                                          loop_scores(c1, cp1, pc1, row_list, b1);
                                        }}})[0]);
        auto g1 = slice(grad);
        torch::Tensor gc, gp;
        print_case("loops", "backward", positions, 1, 1, N, k, S,
                   measure(memory, 1,
                           {{[&] {
                               gc = torch::zeros_like(cp1);
                               gp = torch::zeros_like(pc1);
                             },
                             [&] {
                               torch::NoGradGuard g;
                               loop_backward(g1, row_list, gc, gp);
                             }}})[0]);
      }
    }
  }
}

// DeBERTa-v3's options; `clamped`: DeBERTa-v2's clamped distances instead of
// log buckets (k = 512); `p2p`: the position-to-position term too.
ModelConfig small_encoder(bool deberta, bool clamped, bool p2p = false) {
  ModelConfig c;
  c.vocab_size = 30522;
  c.hidden_size = 256;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.intermediate_size = 1024;
  c.max_position_embeddings = 512;
  if (deberta) {
    use_deberta_v3_attention(c, p2p ? std::vector<std::string>{"p2c", "c2p", "p2p"}
                                    : std::vector<std::string>{"p2c", "c2p"});
    c.type_vocab_size = 0;
    if (clamped) c.position_buckets = -1;
  }
  return c;
}

// At length N the batch holds 4,096 tokens (B = 4096 / N; 32 at N = 128).
void bench_training_step(bench::CountingAllocator& memory, bool quick, int64_t N, int rounds, bool clamped,
                         bool p2p, bool profile) {
  const int64_t B = std::max<int64_t>(1, (quick ? 1024 : 4096) / N);
  struct Setup {
    std::string name;
    BertModel model{nullptr};
    std::unique_ptr<torch::optim::AdamW> optimizer;
  };
  std::vector<Setup> setups;
  // The DeBERTa-style model twice: as it runs (banded position GEMMs where
  // they pay, relative_position.h) and with the full products always.
  std::vector<std::string> names = {"bert", "deberta_v3_style", "deberta_v3_style_full_products"};
  if (p2p) names.push_back("deberta_v3_style_p2p");
  for (const auto& name : names) {
    const bool deberta = name != "bert";
    torch::manual_seed(0);
    Setup s{name, BertModel(small_encoder(deberta, clamped, name == "deberta_v3_style_p2p"), BertModelOptions{false}),
            nullptr};
    if (name == "deberta_v3_style_full_products")
      s.model->encoder->set_banded_positions(false);
    s.model->initialize_weights();
    s.model->train();
    s.optimizer = std::make_unique<torch::optim::AdamW>(s.model->parameters(), torch::optim::AdamWOptions(1e-4));
    setups.push_back(std::move(s));
  }
  auto ids = torch::randint(1, 30522, {B, N}, torch::kLong);
  auto mask = torch::ones({B, N}, torch::kLong);
  mask.index_put_({torch::indexing::Slice(0, std::max<int64_t>(1, B / 2)), torch::indexing::Slice(N - N / 8, N)}, 0);
  auto target = torch::randn({B, N, 256});
  std::vector<Candidate> steps;
  for (auto& s : setups) {
    steps.push_back({kNoSetup, [&] {
                       s.optimizer->zero_grad();
                       auto out = s.model(ids, mask);
                       (out.last_hidden_state - target).pow(2).mean().backward();
                       s.optimizer->step();
                     }});
  }
  auto m = measure(memory, quick ? 3 : rounds, steps);
  // The ratio of each round's two steps, run back to back, then the median:
  // a slow spell of the shared machine hits both steps of a round alike.
  auto paired_ratio = [&](size_t k, size_t base) {
    std::vector<double> ratios;
    for (size_t r = 0; r < m[k].rounds_ms.size(); ++r) ratios.push_back(m[k].rounds_ms[r] / m[base].rounds_ms[r]);
    std::sort(ratios.begin(), ratios.end());
    return ratios[ratios.size() / 2];
  };
  for (size_t k = 0; k < setups.size(); ++k) {
    int64_t parameters = 0;
    for (const auto& p : setups[k].model->parameters()) parameters += p.numel();
    fmt::print(
        "{{\"bench\": \"training_step\", \"model\": \"{}\", \"positions\": \"{}\", \"layers\": 4, \"hidden\": 256, \"heads\": 4, "
        "\"B\": {}, \"N\": {}, \"parameters\": {}, \"median_ms\": {:.2f}, \"cpu_ms\": {:.2f}, \"peak_bytes\": {}, "
        "\"ratio_to_bert\": {:.3f}, \"cpu_ratio_to_bert\": {:.3f}, \"paired_ratio_to_bert\": {:.3f}, "
        "\"paired_ratio_to_c2p_p2c\": {:.3f}}}\n",
        setups[k].name, clamped ? "clamped" : "log buckets", B, N, parameters, m[k].median_ms, m[k].median_cpu_ms, m[k].peak_bytes,
        m[k].median_ms / m[0].median_ms, m[k].median_cpu_ms / m[0].median_cpu_ms, paired_ratio(k, 0),
        paired_ratio(k, 1));
    std::fflush(stdout);
  }
  if (!profile) return;
  // Where each model's step goes: 3 more steps under the operator profiler.
  for (size_t k = 0; k < setups.size(); ++k) {
    const auto ops = profile_ops(steps[k].run, 3);
    double total = 0;
    for (const auto& op : ops) total += op.self_ms;
    std::string top;
    for (size_t i = 0; i < std::min<size_t>(ops.size(), 12); ++i)
      top += fmt::format("{}{{\"op\": \"{}\", \"calls\": {:.0f}, \"self_ms\": {:.2f}}}", i ? ", " : "", ops[i].op,
                         ops[i].calls, ops[i].self_ms);
    fmt::print("{{\"bench\": \"training_step_profile\", \"model\": \"{}\", \"N\": {}, \"total_self_ms\": {:.2f}, "
               "\"top\": [{}]}}\n", setups[k].name, N, total, top);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, clamped = false, p2p = false, profile = false;
  int threads = 0;
  std::string only;
  std::vector<int64_t> lengths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--clamped") == 0) clamped = true;
    else if (std::strcmp(argv[i], "--p2p") == 0) p2p = true;
    else if (std::strcmp(argv[i], "--profile") == 0) profile = true;
    else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (std::strcmp(argv[i], "--length") == 0 && i + 1 < argc) lengths.push_back(std::atoll(argv[++i]));
    else {
      fmt::print(stderr, "usage: mtbert_bench_relpos [--quick] [--clamped] [--p2p] [--profile] [--threads T] [--only op|step] [--length N]...\n");
      return 2;
    }
  }
  mtbert::prepare_process(argc, argv);
  const int used = set_thread_count(threads);
  fmt::print("{{\"bench\": \"setup\", \"threads\": {}, \"torch\": \"{}\"}}\n", used, torch_version_string());
  auto& memory = bench::CountingAllocator::install();
  if (only.empty() || only == "op") bench_op(memory, quick, lengths);
  if (only.empty() || only == "step") {
    // The step at N = 128 by default (31 rounds); at each --length given, 11.
    if (lengths.empty()) bench_training_step(memory, quick, 128, 31, clamped, p2p, profile);
    for (const int64_t n : lengths) bench_training_step(memory, quick, n, 11, clamped, p2p, profile);
  }
  return 0;
}
