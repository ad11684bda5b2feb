// mtbert::disentangled_scores against a plain torch::gather implementation
// (the public implementations' approach: gather each [B,H,N,N] term from the
// [B,H,N,S] GEMM results, then add), forward and backward, on random shapes
// and every dtype; gradcheck in double; CUDA against CPU where a GPU exists;
// the relative plan (ops/relative_plan.h): its windows and order worked out
// independently, and what it refuses.
#include <limits>
#include <torch/torch.h>

#include "ops/disentangled_scores.h"
#include "support/gradcheck.h"
#include "support/test_support.h"

using namespace mtbert;

namespace {

using torch::indexing::Slice;

// [2N - 1] DeBERTa rows of distances -(N-1)..N-1: clamp(d + k, 0, 2k - 1),
// shifted to the first row used, as models/relative_position.h builds them.
torch::Tensor deberta_index(int64_t n, int64_t k) {
  auto rows = torch::clamp(torch::arange(-(n - 1), n, torch::kLong) + k, 0, 2 * k - 1);
  return rows - rows.min();
}

int64_t span_of(const torch::Tensor& index) { return index.max().item<int64_t>() + 1; }

ops::RelativePlanPtr plan_of(const torch::Tensor& index, int64_t tile_rows = 0) {
  return ops::make_relative_plan(index, tile_rows);
}

// The [N, N] matrix of rows: entry (i, j) = index[i - j + N - 1].
torch::Tensor row_matrix(const torch::Tensor& index, int64_t n) {
  auto i = torch::arange(n, torch::kLong).unsqueeze(1), j = torch::arange(n, torch::kLong).unsqueeze(0);
  return index.index({i - j + n - 1});
}

torch::Tensor gather_reference(const torch::Tensor& content, const c10::optional<torch::Tensor>& c2p,
                               const c10::optional<torch::Tensor>& p2c, const torch::Tensor& index, double scale,
                               const c10::optional<torch::Tensor>& bias,
                               const c10::optional<torch::Tensor>& p2p = c10::nullopt) {
  const int64_t B = content.size(0), H = content.size(1), N = content.size(2);
  auto rows = row_matrix(index, N).expand({B, H, N, N});
  auto out = content;
  if (c2p) out = out + scale * torch::gather(*c2p, -1, rows);
  // p2c[b,h,j,row(i,j)] at (i, j): gather along the key's row, then transpose.
  if (p2c) out = out + scale * torch::gather(*p2c, -1, rows.transpose(-1, -2)).transpose(-1, -2);
  // p2p[h, i - j + N - 1]: the distance matrix indexes each head's row.
  if (p2p) out = out + scale * p2p->index({torch::indexing::Slice(), row_matrix(torch::arange(2 * N - 1), N)});
  if (bias) out = out + *bias;
  return out;
}

struct Case {
  int64_t batch, heads, length, k;
  bool c2p = true, p2c = true, bias = true, random_index = false, p2p = false;
};

struct Inputs {
  torch::Tensor content, c2p, p2c, index, bias, p2p;
};

Inputs make_inputs(const Case& c, torch::ScalarType dtype, uint64_t seed) {
  torch::manual_seed(seed);
  Inputs in;
  in.index = c.random_index ? torch::randint(0, 2 * c.k, {2 * c.length - 1}, torch::kLong)
                            : deberta_index(c.length, c.k);
  const int64_t span = c.random_index ? 2 * c.k : span_of(in.index);
  auto opts = torch::TensorOptions().dtype(dtype);
  in.content = torch::randn({c.batch, c.heads, c.length, c.length}, opts);
  in.c2p = torch::randn({c.batch, c.heads, c.length, span}, opts);
  in.p2c = torch::randn({c.batch, c.heads, c.length, span}, opts);
  in.p2p = torch::randn({c.heads, 2 * c.length - 1}, opts);
  if (c.bias) {
    // Padding: the last keys of some rows masked with the dtype's lowest value.
    auto mask = torch::ones({c.batch, c.length}, torch::kLong);
    for (int64_t b = 1; b < c.batch; ++b) mask.index_put_({b, Slice(c.length - b, c.length)}, 0);
    const double lowest = dtype == torch::kHalf       ? -65504.0
                          : dtype == torch::kBFloat16 ? static_cast<double>(std::numeric_limits<c10::BFloat16>::lowest())
                                                      : static_cast<double>(std::numeric_limits<float>::lowest());
    in.bias = ((1 - mask.to(torch::kDouble)) * lowest).view({c.batch, 1, 1, c.length}).to(dtype);
  }
  return in;
}

c10::optional<torch::Tensor> opt(bool on, const torch::Tensor& t) {
  return on ? c10::optional<torch::Tensor>(t) : c10::nullopt;
}

const std::vector<Case> kCases = {
    {1, 1, 5, 8},                            // N < k: no clamping
    {2, 3, 17, 4},                           // N > k: rows clamp at both ends
    {3, 2, 9, 3, true, true, true, true},    // arbitrary (non-monotone) index table
    {2, 4, 12, 6, true, false, true},        // c2p only
    {2, 2, 12, 6, false, true, false},       // p2c only, no bias
    {1, 2, 1, 2},                            // a single token
    {2, 3, 17, 4, true, true, true, false, true},    // all three position terms (p2p)
    {2, 2, 9, 3, false, false, true, false, true},   // p2p only
    {3, 2, 9, 3, true, true, true, true, true},      // p2p with an arbitrary index table
};

// |a - b| <= atol + rtol * |b|, elementwise, ignoring entries where both are
// the same infinity.
double excess(const torch::Tensor& a, const torch::Tensor& b, double atol, double rtol) {
  auto x = a.to(torch::kDouble), y = b.to(torch::kDouble);
  return ((x - y).abs() - (atol + rtol * y.abs())).max().item<double>();
}

}  // namespace

TEST_CASE("disentangled_scores equals the gather formulation, forward and backward", "[ops][relpos]") {
  struct Tolerance {
    torch::ScalarType dtype;
    double atol, rtol;
  };
  // Reduced precision: one rounding of an fp32 sum (half: 2^-11, bf16: 2^-8 relative).
  const std::vector<Tolerance> dtypes = {{torch::kDouble, 1e-12, 1e-12},
                                         {torch::kFloat, 1e-5, 1e-6},
                                         {torch::kHalf, 1e-3, 1e-3},
                                         {torch::kBFloat16, 1e-2, 8e-3}};
  for (const auto& tol : dtypes) {
    for (size_t n = 0; n < kCases.size(); ++n) {
      const Case& c = kCases[n];
      DYNAMIC_SECTION(c10::toString(tol.dtype) << " case " << n) {
        Inputs in = make_inputs(c, tol.dtype, 100 + n);
        std::vector<torch::Tensor> leaves = {in.content, in.c2p, in.p2c, in.p2p};
        for (auto& t : leaves) t.requires_grad_(true);
        auto out = ops::disentangled_scores(leaves[0], opt(c.c2p, leaves[1]), opt(c.p2c, leaves[2]),
                                            plan_of(in.index), 0.7, opt(c.bias, in.bias), opt(c.p2p, leaves[3]));
        // The reference in double from the same (rounded) inputs.
        std::vector<torch::Tensor> ref_leaves;
        for (auto& t : leaves) ref_leaves.push_back(t.detach().to(torch::kDouble).requires_grad_(true));
        auto ref = gather_reference(ref_leaves[0], opt(c.c2p, ref_leaves[1]), opt(c.p2c, ref_leaves[2]), in.index,
                                    0.7, opt(c.bias, in.bias.defined() ? in.bias.to(torch::kDouble) : in.bias),
                                    opt(c.p2p, ref_leaves[3]));
        REQUIRE(out.scalar_type() == tol.dtype);
        REQUIRE(out.sizes() == ref.sizes());
        // The op saturates at the dtype's extremes (its gradient passes straight through).
        const auto ref_values = tol.dtype == torch::kHalf ? ref.detach().clamp(-65504, 65504) : ref.detach();
        CHECK(excess(out, ref_values, tol.atol, tol.rtol) <= 0);

        auto grad = torch::randn_like(ref);
        out.backward(grad.to(tol.dtype));
        ref.backward(grad.to(tol.dtype).to(torch::kDouble));
        CHECK(excess(leaves[0].grad(), ref_leaves[0].grad(), tol.atol, tol.rtol) <= 0);
        for (int t = 1; t <= 3; ++t) {
          const bool used = t == 1 ? c.c2p : t == 2 ? c.p2c : c.p2p;
          if (!used) {
            CHECK(!leaves[t].grad().defined());
            continue;
          }
          // The gradient sums up to 2N terms (p2p's up to B * N); allow for that many roundings of the inputs' scale.
          const double terms = t == 3 ? static_cast<double>(c.batch * c.length) : 2.0 * c.length;
          CHECK(excess(leaves[t].grad(), ref_leaves[t].grad(), tol.atol * terms, tol.rtol) <= 0);
        }
      }
    }
  }
}

TEST_CASE("disentangled_scores passes gradcheck in double", "[ops][relpos][gradcheck]") {
  for (const Case& c : {Case{2, 2, 5, 2}, Case{1, 3, 4, 6}, Case{2, 1, 6, 3, true, true, true, true},
                        Case{2, 2, 5, 2, true, true, true, false, true}}) {
    Inputs in = make_inputs(c, torch::kDouble, 7);
    // A bias with gradient too (the op sums it back to its broadcast shape).
    auto bias = torch::randn({c.batch, 1, c.length, c.length}, torch::kDouble);
    const auto plan = plan_of(in.index);
    auto f = [&](const std::vector<torch::Tensor>& x) {
      return ops::disentangled_scores(x[0], x[1], x[2], plan, 0.37, x[3], opt(c.p2p, x[4]));
    };
    auto result = test::gradcheck(f, {in.content, in.c2p, in.p2c, bias, in.p2p}, {true, true, true, true, c.p2p});
    INFO(result.worst);
    std::cout << "gradcheck B=" << c.batch << " H=" << c.heads << " N=" << c.length << (c.p2p ? " with p2p" : "")
              << ": " << result.entries
              << " Jacobian entries, max |analytic - numeric| " << result.max_abs_error << " (largest entry "
              << result.max_abs_entry << ")\n";
    CHECK(result.ok);
    CHECK(result.entries > 0);
  }
}

TEST_CASE("disentangled_scores backward is deterministic on CPU", "[ops][relpos]") {
  Case c{4, 3, 40, 8};
  Inputs in = make_inputs(c, torch::kFloat, 3);
  auto grad = torch::randn({c.batch, c.heads, c.length, c.length});
  std::vector<torch::Tensor> first;
  for (int run = 0; run < 3; ++run) {
    auto c2p = in.c2p.clone().requires_grad_(true), p2c = in.p2c.clone().requires_grad_(true);
    auto p2p = in.p2p.clone().requires_grad_(true);
    ops::disentangled_scores(in.content, c2p, p2c, plan_of(in.index), 1.0, in.bias, p2p).backward(grad);
    if (run == 0) {
      first = {c2p.grad(), p2c.grad(), p2p.grad()};
    } else {
      CHECK(torch::equal(first[0], c2p.grad()));
      CHECK(torch::equal(first[1], p2c.grad()));
      CHECK(torch::equal(first[2], p2p.grad()));
    }
  }
}

TEST_CASE("disentangled_scores saturates in half precision instead of overflowing", "[ops][relpos]") {
  for (auto dtype : {torch::kHalf, torch::kBFloat16}) {
    const double lowest = dtype == torch::kHalf ? -65504.0 : -3.3895313892515355e38;
    auto content = torch::full({1, 1, 3, 3}, lowest, torch::TensorOptions().dtype(dtype));
    // Far enough beyond the extreme to round to infinity in the dtype.
    auto c2p = torch::full({1, 1, 3, 5}, dtype == torch::kHalf ? -1000.0 : -1e37, torch::TensorOptions().dtype(dtype));
    auto index = deberta_index(3, 4);
    // The plain dtype arithmetic overflows to -inf ...
    auto naive = content + c2p.index({Slice(), Slice(), Slice(), Slice(0, 3)});
    CHECK(std::isinf(naive.min().item<float>()));
    // ... the op stays at the finite extreme, so softmax of a masked row is no NaN.
    auto out = ops::disentangled_scores(content, c2p, c10::nullopt, plan_of(index), 1.0);
    CHECK(std::isfinite(out.min().item<float>()));
    CHECK(out.min().item<double>() == lowest);
    CHECK(!torch::softmax(out.to(torch::kFloat), -1).isnan().any().item<bool>());
  }
}

TEST_CASE("disentangled_scores accepts strided operands and rejects bad ones", "[ops][relpos]") {
  Inputs in = make_inputs({2, 3, 6, 4}, torch::kFloat, 5);
  const auto plan = plan_of(in.index);
  // A transposed view holding the same values as c2p.
  auto strided = in.c2p.transpose(-1, -2).contiguous().transpose(-1, -2);
  REQUIRE(!strided.is_contiguous());
  CHECK(torch::allclose(ops::disentangled_scores(in.content, strided, in.p2c, plan, 0.5, in.bias),
                        ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 0.5, in.bias)));
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan_of(in.index.narrow(0, 0, 5)), 1.0),
                    Catch::Matchers::ContainsSubstring("the plan is for sequences of 3"));
  CHECK_THROWS_AS(ops::disentangled_scores(in.content, in.c2p.to(torch::kDouble), in.p2c, plan, 1.0), c10::Error);
  // Rows past the terms' columns, and terms narrower than the plan's rows.
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan_of(in.index + 100), 1.0),
                    Catch::Matchers::ContainsSubstring("at least the 108 rows"));
  CHECK_THROWS_AS(ops::disentangled_scores(in.content, in.c2p, in.p2c.narrow(3, 0, 2), plan, 1.0), c10::Error);
  CHECK_THROWS_AS(ops::disentangled_scores(in.content, in.c2p, in.p2c, ops::RelativePlanPtr(), 1.0), c10::Error);
  // p2p: [H, 2N - 1] of content's dtype; a strided view reads the same values.
  auto p2p_strided = in.p2p.t().contiguous().t();
  REQUIRE(!p2p_strided.is_contiguous());
  CHECK(torch::equal(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 0.5, in.bias, p2p_strided),
                     ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 0.5, in.bias, in.p2p)));
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 1.0, c10::nullopt,
                                             in.p2p.narrow(1, 0, 10)),
                    Catch::Matchers::ContainsSubstring("p2p must be [H, 2N - 1]"));
  CHECK_THROWS_AS(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 1.0, c10::nullopt,
                                           in.p2p.to(torch::kDouble)),
                  c10::Error);
}

TEST_CASE("RelativePlan refuses bad index tables", "[ops][relpos]") {
  CHECK_THROWS_WITH(plan_of(torch::tensor({0, -1, 2}, torch::kLong)), Catch::Matchers::ContainsSubstring("negative"));
  CHECK_THROWS_WITH(plan_of(torch::tensor({0, 1}, torch::kLong)), Catch::Matchers::ContainsSubstring("[2N - 1]"));
  CHECK_THROWS_WITH(plan_of(torch::tensor({0, 1, 2}, torch::kInt)), Catch::Matchers::ContainsSubstring("int64"));
  CHECK_THROWS_WITH(plan_of(torch::zeros({3, 1}, torch::kLong)), Catch::Matchers::ContainsSubstring("[2N - 1]"));
  CHECK_THROWS_WITH(plan_of(deberta_index(4, 2), -1), Catch::Matchers::ContainsSubstring("tile_rows"));
  CHECK(plan_of(torch::empty({0}, torch::kLong))->length() == 0);
}

TEST_CASE("RelativePlan's backward order lists the distances of each row in increasing order",
          "[ops][relpos]") {
  for (const auto& index : {deberta_index(9, 3), torch::tensor({4, 0, 4, 2, 0, 1, 4}, torch::kLong)}) {
    const auto plan = plan_of(index);
    const auto rows = index.accessor<int64_t, 1>();
    const auto order = plan->order().accessor<int64_t, 1>();
    const auto offsets = plan->offsets().accessor<int64_t, 1>();
    REQUIRE(plan->offsets().numel() == plan->span() + 1);
    int64_t expected = 0;
    for (int64_t r = 0; r < plan->span(); ++r) {
      CHECK(offsets[r] == expected);
      for (int64_t k = 0; k < index.numel(); ++k) {
        if (rows[k] != r) continue;
        CHECK(order[expected] == k);
        ++expected;
      }
    }
    CHECK(offsets[plan->span()] == index.numel());
  }
}

TEST_CASE("RelativePlan made under InferenceMode holds ordinary tensors", "[ops][relpos]") {
  ops::RelativePlanPtr plan;
  {
    c10::InferenceMode inference;
    plan = plan_of(deberta_index(70, 8), 32);
  }
  for (const auto& t : {plan->index(), plan->order(), plan->offsets(), plan->c2p_rows(), plan->p2c_rows(),
                        plan->c2p_first_tensor(), plan->p2c_first_tensor()})
    CHECK_FALSE(t.is_inference());
  // Training with it: the op and the gathers that use its tensors save them.
  Inputs in = make_inputs({1, 2, 70, 8}, torch::kFloat, 4);
  auto c2p = in.c2p.clone().requires_grad_(true);
  auto rows = c2p.index_select(3, plan->c2p_rows().narrow(0, 0, 1));
  ops::disentangled_scores(in.content, c2p, c10::nullopt, plan, 1.0).sum().add(rows.sum()).backward();
  CHECK(c2p.grad().defined());
}

TEST_CASE("disentangled_scores refuses double backward", "[ops][relpos]") {
  Inputs in = make_inputs({1, 2, 5, 3}, torch::kDouble, 6);
  auto c2p = in.c2p.clone().requires_grad_(true), content = in.content.clone().requires_grad_(true);
  auto out = ops::disentangled_scores(content, c2p, c10::nullopt, plan_of(in.index), 1.0);
  // softmax's gradient depends on its output: a grad that requires grad under create_graph.
  auto loss = torch::softmax(out, -1).pow(2).sum();
  CHECK_THROWS_WITH(torch::autograd::grad({loss}, {c2p}, {}, /*retain_graph=*/true, /*create_graph=*/true),
                    Catch::Matchers::ContainsSubstring("double backward is not supported"));
  // First-order gradients through the same graph still work.
  auto first = torch::autograd::grad({loss}, {c2p, content});
  CHECK(first[0].defined());
  CHECK(first[1].defined());
}

TEST_CASE("disentangled_scores on CUDA equals CPU", "[ops][relpos][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device (the CUDA kernel is compile-checked by ops.cuda_kernels_compile)");
  for (auto dtype : {torch::kFloat, torch::kHalf, torch::kBFloat16, torch::kDouble}) {
    for (size_t n = 0; n < kCases.size(); ++n) {
      const Case& c = kCases[n];
      Inputs in = make_inputs(c, dtype, 300 + n);
      auto grad = torch::randn({c.batch, c.heads, c.length, c.length}).to(dtype);
      auto run = [&](torch::Device device) {
        // detach: to(kCPU) returns the tensor itself, which must not become
        // the leaf (the CUDA run's copies of it would then be non-leaves).
        std::vector<torch::Tensor> leaves = {in.content.to(device), in.c2p.to(device), in.p2c.to(device),
                                             in.p2p.to(device)};
        for (auto& t : leaves) t = t.detach().requires_grad_(true);
        auto out = ops::disentangled_scores(leaves[0], opt(c.c2p, leaves[1]), opt(c.p2c, leaves[2]),
                                            plan_of(in.index.to(device)), 0.7,
                                            opt(c.bias, in.bias.defined() ? in.bias.to(device) : in.bias),
                                            opt(c.p2p, leaves[3]));
        out.backward(grad.to(device));
        std::vector<torch::Tensor> result = {out.cpu()};
        for (int t = 1; t <= 3; ++t)
          if (leaves[t].grad().defined()) result.push_back(leaves[t].grad().cpu());
        return result;
      };
      auto cpu = run(torch::kCPU), cuda = run(torch::kCUDA);
      REQUIRE(cpu.size() == cuda.size());
      const double tol = dtype == torch::kDouble ? 1e-12 : dtype == torch::kFloat ? 1e-5 : 2e-2;
      for (size_t k = 0; k < cpu.size(); ++k)
        CHECK(excess(cuda[k], cpu[k], tol * 2 * c.length * c.batch, tol) <= 0);
    }
  }
}

TEST_CASE("disentangled_scores on CUDA refuses a plan on another device, and a plan made in inference mode trains",
          "[ops][relpos][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  Inputs in = make_inputs({1, 2, 9, 4}, torch::kFloat, 9);
  const torch::Device gpu(torch::kCUDA);
  auto content = in.content.to(gpu), c2p = in.c2p.to(gpu), grad = torch::ones_like(content);
  // The CPU plan's table is host memory: refused, never handed to the kernel.
  CHECK_THROWS_WITH(ops::disentangled_scores(content, c2p, c10::nullopt, plan_of(in.index), 1.0),
                    Catch::Matchers::ContainsSubstring("the plan is on cpu"));
  ops::RelativePlanPtr plan;
  {
    c10::InferenceMode inference;
    plan = plan_of(in.index.to(gpu));
    CHECK(torch::isfinite(ops::disentangled_scores(content, c2p, c10::nullopt, plan, 1.0)).all().item<bool>());
  }
  auto leaf = c2p.detach().requires_grad_(true);
  ops::disentangled_scores(content, leaf, c10::nullopt, plan, 1.0).backward(grad);
  CHECK(leaf.grad().defined());
}

namespace {

// A term in banded form: tiles of `tile` rows (rows are queries for c2p, keys
// for p2c), each holding the window of relative rows its rows use, cut out of
// the full [B, H, N, S] term at the plan's windows. Padding rows past N hold
// garbage (1e6), which the op must never read.
torch::Tensor banded(const torch::Tensor& full, const ops::RelativePlan& plan, bool by_query) {
  const int64_t B = full.size(0), H = full.size(1), N = full.size(2), tile = plan.tile_rows(), width = plan.width();
  const auto& first = by_query ? plan.c2p_first() : plan.p2c_first();
  auto band = torch::full({B, H, plan.tiles(), tile, width}, 1e6, full.options());
  for (int64_t t = 0; t < plan.tiles(); ++t) {
    const int64_t count = std::min(tile, N - t * tile);
    band.select(2, t).narrow(2, 0, count).copy_(full.narrow(2, t * tile, count).narrow(3, first[t], width));
  }
  return band;
}

}  // namespace

TEST_CASE("RelativePlan's windows hold every row their tiles use, at the widest tile's width", "[ops][relpos]") {
  for (const Case& c : {Case{2, 3, 37, 8}, Case{2, 2, 40, 64}, Case{1, 2, 11, 3, true, true, true, true}}) {
    for (int64_t tile : {4, 16}) {
      const torch::Tensor index = make_inputs(c, torch::kFloat, 21).index;
      const auto plan = plan_of(index, tile);
      const int64_t N = c.length, tiles = (N + tile - 1) / tile;
      REQUIRE(plan->tiles() == tiles);
      // The rows each tile uses, read off the [N, N] matrix of rows.
      int64_t widest = 0;
      for (const bool by_query : {true, false}) {
        auto rows = row_matrix(index, N);
        if (!by_query) rows = rows.t();  // (j, i) -> row
        const auto& first = by_query ? plan->c2p_first() : plan->p2c_first();
        for (int64_t t = 0; t < tiles; ++t) {
          auto block = rows.narrow(0, t * tile, std::min(tile, N - t * tile));
          const int64_t lo = block.min().item<int64_t>(), hi = block.max().item<int64_t>();
          widest = std::max(widest, hi - lo + 1);
          INFO("N=" << N << " tile=" << tile << " t=" << t << (by_query ? " c2p" : " p2c"));
          CHECK(first[t] <= lo);
          CHECK(first[t] + plan->width() > hi);
          CHECK(first[t] + plan->width() <= plan->span());
        }
      }
      CHECK(plan->width() == widest);
      // c2p_rows lists each window's rows.
      CHECK(plan->c2p_rows().view({tiles, -1}).select(1, 0).equal(torch::tensor(plan->c2p_first(), torch::kLong)));
    }
  }
}

TEST_CASE("disentangled_scores takes banded terms: same scores, gradients in the band's layout", "[ops][relpos]") {
  // Monotone tables (clamped, and N beyond the tiles) and an arbitrary one.
  for (const Case& c : {Case{2, 3, 37, 8}, Case{2, 2, 40, 64}, Case{1, 2, 11, 3, true, true, true, true}}) {
    for (int64_t tile : {4, 16}) {
      Inputs in = make_inputs(c, torch::kDouble, 21);
      const auto full_plan = plan_of(in.index), plan = plan_of(in.index, tile);
      auto grad = torch::randn({c.batch, c.heads, c.length, c.length}, torch::kDouble);
      // p2p alongside: it has no band, and must read the same with either layout.
      auto c2p = in.c2p.clone().requires_grad_(true), p2c = in.p2c.clone().requires_grad_(true);
      auto p2p_full = in.p2p.clone().requires_grad_(true), p2p_banded = in.p2p.clone().requires_grad_(true);
      auto full = ops::disentangled_scores(in.content, c2p, p2c, full_plan, 0.7, in.bias, p2p_full);
      full.backward(grad);
      const auto bc = banded(in.c2p, *plan, true), bp = banded(in.p2c, *plan, false);
      auto c2p_band = bc.clone().requires_grad_(true), p2c_band = bp.clone().requires_grad_(true);
      auto out = ops::disentangled_scores(in.content, c2p_band, p2c_band, plan, 0.7, in.bias, p2p_banded);
      out.backward(grad);
      CHECK(torch::equal(p2p_banded.grad(), p2p_full.grad()));
      INFO("N=" << c.length << " k=" << c.k << " tile=" << tile);
      CHECK(torch::allclose(out, full, 1e-12, 0));
      // A banded plan serves full terms too.
      CHECK(torch::allclose(ops::disentangled_scores(in.content, in.c2p, in.p2c, plan, 0.7, in.bias),
                            ops::disentangled_scores(in.content, in.c2p, in.p2c, full_plan, 0.7, in.bias), 1e-12, 0));
      // The band's gradient is the full gradient's window; padding rows are 0.
      auto window = [&](const torch::Tensor& g, bool by_query, const torch::Tensor& padding) {
        return banded(g, *plan, by_query).masked_fill(padding, 0);
      };
      CHECK(torch::allclose(c2p_band.grad(), window(c2p.grad(), true, bc == 1e6), 1e-12, 0));
      CHECK(torch::allclose(p2c_band.grad(), window(p2c.grad(), false, bp == 1e6), 1e-12, 0));
      // Every full-gradient entry outside the windows is zero: nothing lost.
      CHECK(c2p_band.grad().sum().item<double>() == Approx(c2p.grad().sum().item<double>()).epsilon(1e-9));
    }
  }
}

TEST_CASE("disentangled_scores with banded terms passes gradcheck in double", "[ops][relpos][gradcheck]") {
  Case c{2, 2, 7, 3};
  Inputs in = make_inputs(c, torch::kDouble, 8);
  const auto plan = plan_of(in.index, 3);
  const auto bc = banded(in.c2p, *plan, true), bp = banded(in.p2c, *plan, false);
  auto f = [&](const std::vector<torch::Tensor>& x) {
    return ops::disentangled_scores(x[0], x[1], x[2], plan, 0.37, c10::nullopt, x[3]);
  };
  auto result = test::gradcheck(f, {in.content, bc.masked_fill(bc == 1e6, 0), bp.masked_fill(bp == 1e6, 0), in.p2p},
                                {true, true, true, true});
  INFO(result.worst);
  CHECK(result.ok);
  CHECK(result.entries > 0);
}

TEST_CASE("disentangled_scores rejects banded terms that do not fit the plan's band", "[ops][relpos]") {
  Case c{1, 2, 9, 4};
  Inputs in = make_inputs(c, torch::kFloat, 9);
  const auto plan = plan_of(in.index, 4);
  const auto bc = banded(in.c2p, *plan, true), bp = banded(in.p2c, *plan, false);
  CHECK_NOTHROW(ops::disentangled_scores(in.content, bc, bp, plan, 1.0));
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, bc, bp, plan_of(in.index), 1.0),
                    Catch::Matchers::ContainsSubstring("the plan has no band"));
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, bc.narrow(4, 0, plan->width() - 1), bp, plan, 1.0),
                    Catch::Matchers::ContainsSubstring("the plan's band"));
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, bc.narrow(2, 0, 2), bp, plan, 1.0),
                    Catch::Matchers::ContainsSubstring("the plan's band"));  // tiles * T < N
  CHECK_THROWS_WITH(ops::disentangled_scores(in.content, bc, bp, plan_of(in.index, 3), 1.0),
                    Catch::Matchers::ContainsSubstring("the plan's band"));  // another tiling
}

TEST_CASE("disentangled_scores with banded terms on CUDA equals CPU", "[ops][relpos][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device (the CUDA kernel is compile-checked by ops.cuda_kernels_compile)");
  Case c{2, 3, 37, 8};
  Inputs in = make_inputs(c, torch::kFloat, 31);
  const auto host_plan = plan_of(in.index, 16);
  const auto bc = banded(in.c2p, *host_plan, true), bp = banded(in.p2c, *host_plan, false);
  auto grad = torch::randn({c.batch, c.heads, c.length, c.length});
  auto run = [&](torch::Device device) {
    auto c2p = bc.to(device).detach().requires_grad_(true), p2c = bp.to(device).detach().requires_grad_(true);
    auto p2p = in.p2p.to(device).detach().requires_grad_(true);
    auto out = ops::disentangled_scores(in.content.to(device), c2p, p2c, plan_of(in.index.to(device), 16), 0.7,
                                        in.bias.to(device), p2p);
    out.backward(grad.to(device));
    return std::vector<torch::Tensor>{out.cpu(), c2p.grad().cpu(), p2c.grad().cpu(), p2p.grad().cpu()};
  };
  auto cpu = run(torch::kCPU), cuda = run(torch::kCUDA);
  for (size_t k = 0; k < cpu.size(); ++k) CHECK(excess(cuda[k], cpu[k], 1e-5 * 2 * c.length * c.batch, 1e-5) <= 0);
}

TEST_CASE("disentangled_scores on CUDA rejects banded terms that do not fit with an error, not a device assert",
          "[ops][relpos][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device (the CUDA kernel is compile-checked by ops.cuda_kernels_compile)");
  Case c{1, 2, 9, 4};
  Inputs in = make_inputs(c, torch::kFloat, 9);
  const torch::Device gpu(torch::kCUDA);
  const auto plan = plan_of(in.index.to(gpu), 4);
  const auto host_plan = plan_of(in.index, 4);
  auto content = in.content.to(gpu), c2p = banded(in.c2p, *host_plan, true).to(gpu);
  auto p2c = banded(in.p2c, *host_plan, false).to(gpu);
  CHECK_THROWS_WITH(ops::disentangled_scores(content, c2p.narrow(4, 0, 1), p2c, plan, 1.0),
                    Catch::Matchers::ContainsSubstring("the plan's band"));
  // The CUDA context is still usable.
  auto out = ops::disentangled_scores(content, c2p, p2c, plan, 1.0);
  CHECK(torch::isfinite(out).all().item<bool>());
}

TEST_CASE("disentangled_scores passes gradcheck in double on CUDA", "[ops][relpos][gradcheck][cuda]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  for (const Case& c : {Case{2, 2, 5, 2}, Case{2, 1, 6, 3, true, true, true, true, true}}) {
    Inputs in = make_inputs(c, torch::kDouble, 17);
    auto bias = torch::randn({c.batch, 1, c.length, c.length}, torch::kDouble).cuda();
    const auto plan = plan_of(in.index.cuda());
    auto f = [&](const std::vector<torch::Tensor>& x) {
      return ops::disentangled_scores(x[0], x[1], x[2], plan, 0.37, x[3], opt(c.p2p, x[4]));
    };
    auto result = test::gradcheck(f, {in.content.cuda(), in.c2p.cuda(), in.p2c.cuda(), bias, in.p2p.cuda()},
                                  {true, true, true, true, c.p2p});
    INFO(result.worst);
    CHECK(result.ok);
    CHECK(result.entries > 0);
  }
}

// More scores than a 32-bit index reaches: the kernels index in int64. The
// reference is the gather formulation, on the GPU too (the CPU would take
// minutes), checked on rows at both ends.
TEST_CASE("disentangled_scores on CUDA at B*H*N^2 > 2^31", "[ops][relpos][cuda][large]") {
  if (!torch::cuda::is_available()) MTBERT_SKIP("no CUDA device here");
  const int64_t B = 2, H = 4, N = 16400, k = 256;  // 2.15e9 scores
  INFO("needs about " << static_cast<double>(B * H * N * N * 4 * 2) / 1e9 << " GB of GPU memory");
  torch::manual_seed(12);
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(torch::kCUDA);
  auto index = deberta_index(N, k).cuda();
  const int64_t span = 2 * k;
  auto content = torch::randn({B, H, N, N}, options);
  auto c2p = torch::randn({B, H, N, span}, options), p2c = torch::randn({B, H, N, span}, options);
  auto out = ops::disentangled_scores(content, c2p, p2c, plan_of(index), 0.5);
  for (const int64_t b : {int64_t{0}, B - 1}) {
    for (const int64_t i : {int64_t{0}, N - 1}) {
      // Row i of (b, last head): content + 0.5 * (c2p[i, r(i, j)] + p2c[j, r(i, j)]).
      auto rows = index.index({torch::arange(i, i - N, -1, index.options()) + (N - 1)});
      auto expected = content[b][H - 1][i] +
                      0.5 * (c2p[b][H - 1][i].index({rows}) +
                             p2c[b][H - 1].gather(1, rows.unsqueeze(1)).squeeze(1));
      CHECK(excess(out[b][H - 1][i], expected, 1e-5, 1e-6) <= 0);
    }
  }
}
