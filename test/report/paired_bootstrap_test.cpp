// The paired bootstrap of report differences on fabricated predictions whose
// differences are known: the interval holds a known difference and excludes
// 0 when the difference is real, centres on 0 when there is none, and the
// pairing of examples across rows and runs is what makes it narrow.
#include "report/paired_bootstrap.h"

#include <random>

#include "core/internal_error.h"
#include "support/test_support.h"

using Catch::Matchers::WithinAbs;
using mtbert::BootstrapOptions;
using mtbert::paired_bootstrap;
using mtbert::TaskMetric;
using mtbert::TaskOutcomes;

namespace {

// Binary gold labels and a prediction that is right exactly on `right` of them.
TaskOutcomes classifier(const std::vector<double>& gold, const std::vector<bool>& right) {
  TaskOutcomes t;
  t.metric = TaskMetric::accuracy;
  t.gold = gold;
  std::vector<double> predicted(gold.size());
  for (size_t i = 0; i < gold.size(); ++i) predicted[i] = right[i] ? gold[i] : 1.0 - gold[i];
  t.runs.push_back(predicted);
  return t;
}

std::vector<double> alternating(size_t n) {
  std::vector<double> gold(n);
  for (size_t i = 0; i < n; ++i) gold[i] = static_cast<double>(i % 2);
  return gold;
}

}  // namespace

TEST_CASE("a real difference: the estimate is exact and the interval holds it, not 0", "[report][bootstrap]") {
  const size_t n = 1000;
  const auto gold = alternating(n);
  std::vector<bool> reference(n), row(n);
  for (size_t i = 0; i < n; ++i) {
    reference[i] = i % 10 < 7;  // 70% right
    row[i] = i % 10 < 8;        // 80%: also right where the reference is
  }
  BootstrapOptions options;
  const auto d = paired_bootstrap({{"para", classifier(gold, row)}}, {{"para", classifier(gold, reference)}},
                                  {"para", "overall"}, options);
  CHECK_THAT(d.at("para").estimate, WithinAbs(0.1, 1e-12));
  CHECK(d.at("para").low < 0.1);
  CHECK(d.at("para").high > 0.1);
  CHECK_FALSE(d.at("para").contains_zero());
  // The per-example differences are 1 on 10% of the examples and 0 elsewhere:
  // the bootstrap's standard error is sqrt(0.1 * 0.9 / 1000) = 0.0095, so the
  // 95% interval is about 0.1 +- 0.019.
  CHECK_THAT(d.at("para").high - d.at("para").low, WithinAbs(2 * 1.96 * 0.0095, 0.006));
  // One task: the overall is its normalized metric.
  CHECK_THAT(d.at("overall").estimate, WithinAbs(0.1, 1e-12));
}

TEST_CASE("no difference: an interval around 0", "[report][bootstrap]") {
  const size_t n = 600;
  const auto gold = alternating(n);
  std::vector<bool> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = i % 4 != 0;  // both 75% right, wrong on different examples
    b[i] = i % 4 != 1;
  }
  const auto d = paired_bootstrap({{"sst", classifier(gold, a)}}, {{"sst", classifier(gold, b)}}, {"sst"}, {});
  CHECK(d.at("sst").estimate == 0.0);
  CHECK(d.at("sst").contains_zero());
  CHECK_THAT(d.at("sst").low, WithinAbs(-d.at("sst").high, 0.01));
  // Identical predictions: every sample's difference is exactly 0.
  const auto same = paired_bootstrap({{"sst", classifier(gold, a)}}, {{"sst", classifier(gold, a)}}, {"sst"}, {});
  CHECK(same.at("sst").low == 0.0);
  CHECK(same.at("sst").high == 0.0);
}

TEST_CASE("examples are paired: a small real difference between two noisy rows is resolved", "[report][bootstrap]") {
  // Both rows are right on about half of the examples; the row fixes 20 of
  // the reference's errors. Unpaired, the two accuracies' sampling noise
  // (standard error about 0.016 each on 1000 examples) would swamp the 0.02;
  // paired, only the 20 changed examples vary.
  const size_t n = 1000;
  const auto gold = alternating(n);
  std::mt19937_64 rng(7);
  std::vector<bool> reference(n), row(n);
  int fixed = 0;
  for (size_t i = 0; i < n; ++i) {
    reference[i] = rng() % 2 == 0;
    row[i] = reference[i];
    if (!reference[i] && fixed < 20) {
      row[i] = true;
      ++fixed;
    }
  }
  const auto d = paired_bootstrap({{"para", classifier(gold, row)}}, {{"para", classifier(gold, reference)}}, {"para"}, {});
  CHECK_THAT(d.at("para").estimate, WithinAbs(0.02, 1e-12));
  CHECK_FALSE(d.at("para").contains_zero());
  CHECK(d.at("para").high - d.at("para").low < 0.025);
}

TEST_CASE("a row's runs are averaged on the same draw, Pearson tasks and the overall", "[report][bootstrap]") {
  const size_t n = 400;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  TaskOutcomes row, reference;
  row.metric = reference.metric = TaskMetric::pearson;
  for (size_t i = 0; i < n; ++i) row.gold.push_back(5.0 * static_cast<double>(i % 50) / 49.0);
  reference.gold = row.gold;
  row.runs.assign(2, {});
  reference.runs.assign(1, {});
  for (size_t i = 0; i < n; ++i) {
    row.runs[0].push_back(row.gold[i] + 0.3 * noise(rng));
    row.runs[1].push_back(row.gold[i] + 0.5 * noise(rng));
    reference.runs[0].push_back(row.gold[i] + 3.0 * noise(rng));
  }
  const auto sts = paired_bootstrap({{"sts", row}}, {{"sts", reference}}, {"sts", "overall"}, {});
  const double mean_r = (mtbert::task_metric(TaskMetric::pearson, row.runs[0], row.gold) +
                         mtbert::task_metric(TaskMetric::pearson, row.runs[1], row.gold)) / 2;
  const double expected = mean_r - mtbert::task_metric(TaskMetric::pearson, reference.runs[0], reference.gold);
  CHECK_THAT(sts.at("sts").estimate, WithinAbs(expected, 1e-12));
  CHECK_FALSE(sts.at("sts").contains_zero());
  // The overall maps r to (r + 1) / 2: half the difference for one task.
  CHECK_THAT(sts.at("overall").estimate, WithinAbs(expected / 2, 1e-12));
}

TEST_CASE("rows that do not predict the same examples are refused", "[report][bootstrap]") {
  const auto gold = alternating(10);
  auto other = gold;
  other[0] = 1.0 - other[0];
  std::vector<bool> right(10, true);
  CHECK_THROWS_AS(paired_bootstrap({{"sst", classifier(gold, right)}}, {{"sst", classifier(other, right)}}, {"sst"}, {}),
                  mtbert::InternalError);
}
