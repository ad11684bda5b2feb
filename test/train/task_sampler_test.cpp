#include "train/task_sampler.h"

#include <cmath>
#include <random>

#include "core/internal_error.h"
#include "support/test_support.h"


namespace {

// The three CS224N training sets, in batches of 16.
std::vector<mtbert::SamplerTask> cs224n_tasks(int64_t quora_examples) {
  return {{"sst", 8544, 534}, {"para", quora_examples, (quora_examples + 15) / 16}, {"sts", 6040, 378}};
}

mtbert::SamplerConfig sampler(const std::string& kind) {
  mtbert::SamplerConfig c;
  c.kind = *mtbert::enum_from_name<mtbert::SamplerKind>(kind);
  return c;
}

struct Expected {
  int64_t epoch;
  double alpha;
  std::vector<double> p;
};

// p_t = N_t^alpha / sum_u N_u^alpha with alpha = 1 - 0.8 (e - 1)/9, computed
// independently in Python (float64) for both Quora sizes.
const std::vector<Expected> kAnnealedSplitQuora{
    {1, 1, {0.27936175778184674, 0.52314935914203509, 0.19748888307611823}},
    {2, 0.91111111111111109, {0.28570201687515767, 0.50600346904912186, 0.2082945140757205}},
    {3, 0.82222222222222219, {0.29180767563537741, 0.48878553429123195, 0.21940679007339076}},
    {4, 0.73333333333333328, {0.29765413104956207, 0.47153614924537712, 0.23080971970506078}},
    {5, 0.64444444444444438, {0.30321792905190603, 0.45429650999151311, 0.24248556095658086}},
    {6, 0.55555555555555558, {0.30847701600570199, 0.43710802458384779, 0.25441495941045023}},
    {7, 0.46666666666666656, {0.31341097316835342, 0.42001191557275425, 0.26657711125889244}},
    {8, 0.37777777777777777, {0.31800122912337331, 0.40304882282581189, 0.27894994805081474}},
    {9, 0.28888888888888886, {0.3222312457169707, 0.38625841475857109, 0.29151033952445821}},
    {10, 0.19999999999999996, {0.32608667374953643, 0.36967901586478302, 0.30423431038568066}},
};
const std::vector<Expected> kAnnealedFullQuora{
    {1, 1, {0.05473765135498751, 0.90656672432570951, 0.038695624319302964}},
    {2, 0.91111111111111109, {0.068335120939670396, 0.88184433188283462, 0.049820547177494907}},
    {3, 0.82222222222222219, {0.084696282223576919, 0.851621570371072, 0.063682147405351136}},
    {4, 0.73333333333333328, {0.10405799050980011, 0.81525239991565757, 0.080689609574542381}},
    {5, 0.64444444444444438, {0.12651469998524306, 0.77231058356214355, 0.10117471645261326}},
    {6, 0.55555555555555558, {0.15194747387756993, 0.72273456597214181, 0.12531796015028829}},
    {7, 0.46666666666666656, {0.17996328238992768, 0.66696584243556067, 0.15307087517451157}},
    {8, 0.37777777777777777, {0.20986752029720906, 0.60603717275746039, 0.18409530694533049}},
    {9, 0.28888888888888886, {0.24069171231335998, 0.54156365953590235, 0.21774462815073772}},
    {10, 0.19999999999999996, {0.2712857036807565, 0.47560852530511477, 0.25310577101412868}},
};

// How often each task occurs in a plan, as fractions.
std::vector<double> frequencies(const std::vector<std::vector<int64_t>>& plan, size_t n_tasks) {
  std::vector<double> f(n_tasks, 0.0);
  size_t single = 0;
  for (const auto& step : plan) {
    if (step.size() != 1) continue;
    ++single;
    f[static_cast<size_t>(step[0])] += 1.0;
  }
  REQUIRE(single == plan.size());
  for (double& x : f) x /= static_cast<double>(plan.size());
  return f;
}

// Each frequency within 5 standard deviations of a binomial proportion: the
// plans are deterministic, so this cannot flake; it fails on a wrong law.
void check_frequencies(const std::vector<std::vector<int64_t>>& plan, const std::vector<double>& p) {
  const auto f = frequencies(plan, p.size());
  const double n = static_cast<double>(plan.size());
  for (size_t t = 0; t < p.size(); ++t) {
    INFO("task " << t << ": frequency " << f[t] << ", probability " << p[t]);
    CHECK(std::abs(f[t] - p[t]) <= 5 * std::sqrt(p[t] * (1 - p[t]) / n));
  }
}

}  // namespace

TEST_CASE("annealed sampling follows alpha = 1 - 0.8 (e-1)/(E-1) over 10 epochs", "[task_sampler]") {
  for (const auto& [quora, table] :
       {std::pair{int64_t{16000}, kAnnealedSplitQuora}, std::pair{int64_t{141506}, kAnnealedFullQuora}}) {
    const mtbert::TaskSampler s(sampler("annealed"), cs224n_tasks(quora), 10, 11711);
    for (const auto& row : table) {
      INFO("Quora " << quora << ", epoch " << row.epoch);
      CHECK(s.anneal_alpha(row.epoch) == Approx(row.alpha).epsilon(1e-14));
      const auto p = s.probabilities(row.epoch);
      REQUIRE(p.size() == 3);
      for (size_t t = 0; t < 3; ++t) CHECK(p[t] == Approx(row.p[t]).epsilon(1e-13));
    }
  }
}

TEST_CASE("annealed plans draw tasks with the epoch's probabilities", "[task_sampler]") {
  mtbert::SamplerConfig c = sampler("annealed");
  c.steps_per_epoch = 200000;
  const mtbert::TaskSampler s(c, cs224n_tasks(141506), 10, 7);
  for (const int64_t epoch : {1, 5, 10}) {
    INFO("epoch " << epoch);
    const auto plan = s.plan_epoch(epoch);
    REQUIRE(plan.size() == 200000);
    check_frequencies(plan, kAnnealedFullQuora[static_cast<size_t>(epoch - 1)].p);
  }
}

TEST_CASE("annealing with one epoch stays proportional, later epochs keep anneal_min", "[task_sampler]") {
  const mtbert::TaskSampler one(sampler("annealed"), cs224n_tasks(16000), 1, 1);
  CHECK(one.anneal_alpha(1) == 1.0);
  const auto p = one.probabilities(1);
  CHECK(p[1] == Approx(16000.0 / (8544 + 16000 + 6040)).epsilon(1e-14));
  const mtbert::TaskSampler ten(sampler("annealed"), cs224n_tasks(16000), 10, 1);
  CHECK(ten.anneal_alpha(12) == Approx(0.2).epsilon(1e-14));
  mtbert::SamplerConfig none = sampler("annealed");
  none.anneal_min = 1.0;
  CHECK(mtbert::TaskSampler(none, cs224n_tasks(16000), 10, 1).anneal_alpha(10) == 1.0);
}

TEST_CASE("proportional and temperature sampling", "[task_sampler]") {
  mtbert::SamplerConfig prop = sampler("proportional");
  const mtbert::TaskSampler ps(prop, cs224n_tasks(16000), 10, 3);
  const std::vector<double> expected_prop{8544.0 / 30584, 16000.0 / 30584, 6040.0 / 30584};
  for (const int64_t epoch : {1, 10}) {
    const auto p = ps.probabilities(epoch);
    for (size_t t = 0; t < 3; ++t) CHECK(p[t] == Approx(expected_prop[t]).epsilon(1e-14));
  }
  CHECK(ps.steps_per_epoch() == 534 + 1000 + 378);
  const auto plan = ps.plan_epoch(1);
  CHECK(plan.size() == 1912);
  check_frequencies(plan, expected_prop);

  mtbert::SamplerConfig temp = sampler("temperature");
  temp.temperature = 2.0;
  temp.steps_per_epoch = 100000;
  const mtbert::TaskSampler ts(temp, cs224n_tasks(16000), 10, 3);
  // sqrt(N_t) / sum sqrt(N_u), from Python.
  const std::vector<double> expected_temp{0.3116000617979506, 0.4264095341890859, 0.26199040401296353};
  const auto p = ts.probabilities(4);
  for (size_t t = 0; t < 3; ++t) CHECK(p[t] == Approx(expected_temp[t]).epsilon(1e-13));
  check_frequencies(ts.plan_epoch(4), expected_temp);
  // T = 5 is annealing's last epoch (alpha = 0.2 = 1/5).
  temp.temperature = 5.0;
  const auto p5 = mtbert::TaskSampler(temp, cs224n_tasks(16000), 10, 3).probabilities(1);
  for (size_t t = 0; t < 3; ++t) CHECK(p5[t] == Approx(kAnnealedSplitQuora[9].p[t]).epsilon(1e-13));
}

TEST_CASE("sequential: every batch of each task in turn, one pass", "[task_sampler]") {
  const mtbert::TaskSampler s(sampler("sequential"), {{"a", 30, 3}, {"b", 10, 1}, {"c", 20, 2}}, 2, 5);
  CHECK(s.steps_per_epoch() == 6);
  const std::vector<std::vector<int64_t>> expected{{0}, {0}, {0}, {1}, {2}, {2}};
  CHECK(s.plan_epoch(1) == expected);
  CHECK(s.plan_epoch(2) == expected);
  const auto p = s.probabilities(1);
  CHECK(p == std::vector<double>{3.0 / 6, 1.0 / 6, 2.0 / 6});
}

TEST_CASE("round robin: tasks in turn, finished ones drop out", "[task_sampler]") {
  const mtbert::TaskSampler s(sampler("round_robin"), {{"a", 30, 3}, {"b", 10, 1}, {"c", 20, 2}}, 2, 5);
  CHECK(s.steps_per_epoch() == 6);
  const std::vector<std::vector<int64_t>> expected{{0}, {1}, {2}, {0}, {2}, {0}};
  CHECK(s.plan_epoch(1) == expected);
}

TEST_CASE("mixed: a batch of every task in every step", "[task_sampler]") {
  const mtbert::TaskSampler s(sampler("mixed"), {{"a", 30, 3}, {"b", 10, 1}, {"c", 20, 2}}, 2, 5);
  CHECK(s.steps_per_epoch() == 3);
  CHECK(s.plan_epoch(1) == std::vector<std::vector<int64_t>>(3, {0, 1, 2}));
  CHECK(s.probabilities(1) == std::vector<double>{1.0, 1.0, 1.0});
  mtbert::SamplerConfig c = sampler("mixed");
  c.steps_per_epoch = 7;
  CHECK(mtbert::TaskSampler(c, {{"a", 30, 3}, {"b", 10, 1}}, 2, 5).plan_epoch(2).size() == 7);
}

TEST_CASE("plans are deterministic in (seed, epoch) and differ otherwise", "[task_sampler]") {
  for (const char* kind : {"proportional", "annealed", "temperature"}) {
    INFO(kind);
    const mtbert::TaskSampler a(sampler(kind), cs224n_tasks(16000), 10, 11711);
    const mtbert::TaskSampler b(sampler(kind), cs224n_tasks(16000), 10, 11711);
    const mtbert::TaskSampler other_seed(sampler(kind), cs224n_tasks(16000), 10, 11712);
    CHECK(a.plan_epoch(3) == b.plan_epoch(3));
    CHECK(a.plan_epoch(3) != a.plan_epoch(4));
    CHECK(a.plan_epoch(3) != other_seed.plan_epoch(3));
  }
}

TEST_CASE("a plan is the same on every platform", "[task_sampler]") {
  // The first steps of seed 1, epoch 1 over two equally likely tasks follow
  // from std::mt19937_64 seeded by std::seed_seq{1, 0, 1, 0}, both fixed by
  // the C++ standard: task 1 iff the top 53 bits of the output, over 2^53, are
  // >= 0.5, i.e. iff the output's top bit is set.
  std::seed_seq seq{1u, 0u, 1u, 0u};
  std::mt19937_64 rng(seq);
  std::vector<std::vector<int64_t>> expected;
  for (int i = 0; i < 32; ++i) expected.push_back({static_cast<int64_t>(rng() >> 63)});
  mtbert::SamplerConfig c = sampler("proportional");
  c.steps_per_epoch = 32;
  CHECK(mtbert::TaskSampler(c, {{"a", 5, 1}, {"b", 5, 1}}, 1, 1).plan_epoch(1) == expected);
}

TEST_CASE("the sampler rejects what cannot be planned", "[task_sampler]") {
  CHECK_THROWS_AS(mtbert::TaskSampler(sampler("annealed"), {}, 10, 1), mtbert::InternalError);
  CHECK_THROWS_AS(mtbert::TaskSampler(sampler("annealed"), {{"a", 0, 0}}, 10, 1), mtbert::InternalError);
  CHECK_THROWS_AS(mtbert::TaskSampler(sampler("annealed"), {{"a", 5, 1}}, 0, 1), mtbert::InternalError);
  mtbert::SamplerConfig c = sampler("sequential");
  c.steps_per_epoch = 5;
  CHECK_THROWS_AS(mtbert::TaskSampler(c, {{"a", 5, 1}}, 1, 1), mtbert::InternalError);
  CHECK_THROWS_AS(mtbert::TaskSampler(sampler("mixed"), {{"a", 5, 1}}, 1, 1).plan_epoch(0), mtbert::InternalError);
}
