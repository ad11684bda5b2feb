#include "data/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/internal_error.h"

namespace mtbert {

namespace {

template <class T>
void check_sizes(const std::vector<T>& predicted, const std::vector<T>& gold, const char* metric) {
  check_invariant(predicted.size() == gold.size(), "{}: {} predictions for {} gold labels", metric, predicted.size(),
                  gold.size());
}

}  // namespace

double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold) {
  check_sizes(predicted, gold, "accuracy");
  if (gold.empty()) return 0.0;
  int64_t correct = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) correct += predicted[i] == gold[i];
  return static_cast<double>(correct) / static_cast<double>(gold.size());
}

double pearson(const std::vector<double>& predicted, const std::vector<double>& gold) {
  check_sizes(predicted, gold, "pearson");
  const std::size_t n = gold.size();
  if (n < 2) return 0.0;
  // Two passes (means, then centered sums): the one-pass textbook formula
  // loses most of its digits when the scores share a large offset.
  double mean_p = 0.0, mean_g = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    mean_p += predicted[i];
    mean_g += gold[i];
  }
  mean_p /= static_cast<double>(n);
  mean_g /= static_cast<double>(n);
  double cov = 0.0, var_p = 0.0, var_g = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dp = predicted[i] - mean_p;
    const double dg = gold[i] - mean_g;
    cov += dp * dg;
    var_p += dp * dp;
    var_g += dg * dg;
  }
  if (var_p == 0.0 || var_g == 0.0) return 0.0;
  const double r = cov / (std::sqrt(var_p) * std::sqrt(var_g));
  if (!std::isfinite(r)) return 0.0;
  // Rounding can carry a perfect correlation a hair past 1 (numpy clips too).
  return std::clamp(r, -1.0, 1.0);
}

}  // namespace mtbert
