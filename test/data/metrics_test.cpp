#include "data/metrics.h"

#include <stdexcept>

#include "core/internal_error.h"
#include "support/test_support.h"

namespace {

// A 64-bit LCG (Knuth's MMIX constants) giving doubles in [0, 1) with 53
// random bits: exactly the same numbers in C++ and in the Python snippet below.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  double next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) * 0x1.0p-53;
  }

 private:
  uint64_t state_;
};

}  // namespace

TEST_CASE("accuracy, by hand", "[metrics]") {
  // predicted 0 1 2 3 4 4 0 1
  // gold      0 1 2 0 4 3 0 2
  // equal     y y y n y n y n  -> 5 of 8 = 0.625
  CHECK(mtbert::accuracy({0, 1, 2, 3, 4, 4, 0, 1}, {0, 1, 2, 0, 4, 3, 0, 2}) == 0.625);
  CHECK(mtbert::accuracy({1, 1, 1}, {1, 1, 1}) == 1.0);
  CHECK(mtbert::accuracy({0}, {1}) == 0.0);
  CHECK(mtbert::accuracy({}, {}) == 0.0);
  CHECK_THROWS_AS(mtbert::accuracy({1, 2}, {1}), mtbert::InternalError);
}

TEST_CASE("Pearson r, by hand", "[metrics]") {
  // x = 1 2 3 4 5, mean 3, deviations -2 -1 0 1 2
  // y = 2 1 4 3 5, mean 3, deviations -1 -2 1 0 2
  // sum dx*dy = 2 + 2 + 0 + 0 + 4 = 8
  // sum dx^2 = 4 + 1 + 0 + 1 + 4 = 10, sum dy^2 = 1 + 4 + 1 + 0 + 4 = 10
  // r = 8 / sqrt(10 * 10) = 0.8
  CHECK(mtbert::pearson({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) == Approx(0.8).epsilon(1e-15));
  // Symmetric, and invariant to scale and offset of either side.
  CHECK(mtbert::pearson({2, 1, 4, 3, 5}, {1, 2, 3, 4, 5}) == Approx(0.8).epsilon(1e-15));
  CHECK(mtbert::pearson({-3, -6, -9, -12, -15}, {2, 1, 4, 3, 5}) == Approx(-0.8).epsilon(1e-15));
  // A large shared offset: the one-pass formula (sum x^2 ~ 5e16) would lose
  // every digit here; two passes do not.
  CHECK(mtbert::pearson({1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4, 1e8 + 5}, {2, 1, 4, 3, 5}) ==
        Approx(0.8).epsilon(1e-12));
  CHECK(mtbert::pearson({1, 2, 3}, {10, 20, 30}) == Approx(1.0).epsilon(1e-15));
  CHECK(mtbert::pearson({1, 2, 3}, {3, 2, 1}) == Approx(-1.0).epsilon(1e-15));
}

TEST_CASE("Pearson r where it is undefined is 0, never NaN", "[metrics]") {
  CHECK(mtbert::pearson({}, {}) == 0.0);
  CHECK(mtbert::pearson({1.5}, {2.5}) == 0.0);
  CHECK(mtbert::pearson({2, 2, 2}, {1, 2, 3}) == 0.0);
  CHECK(mtbert::pearson({1, 2, 3}, {4, 4, 4}) == 0.0);
  CHECK_THROWS_AS(mtbert::pearson({1, 2}, {1, 2, 3}), mtbert::InternalError);
}

TEST_CASE("Pearson r of 10,000 points matches numpy.corrcoef", "[metrics]") {
  // Reference, computed offline with numpy 1.24.2 (/usr/bin/python3):
  //   s = 12345
  //   def nxt():
  //       global s; s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
  //       return (s >> 11) / 2.0**53
  //   p, g = [], []
  //   for i in range(10000):
  //       u1 = nxt(); u2 = nxt(); x = 5.0 * u1
  //       p.append(x); g.append(0.7 * x + 1.5 * u2)
  //   numpy.corrcoef(p, g)[0, 1]  ->  0.9205542788772614
  Lcg rng(12345);
  std::vector<double> predicted, gold;
  for (int i = 0; i < 10000; ++i) {
    const double u1 = rng.next();
    const double u2 = rng.next();
    const double x = 5.0 * u1;
    predicted.push_back(x);
    gold.push_back(0.7 * x + 1.5 * u2);
  }
  CHECK(predicted[0] == 0.5478930299274731);  // the same numbers as in Python
  CHECK(gold[2] == 1.9804170618609762);
  CHECK(mtbert::pearson(predicted, gold) == Approx(0.9205542788772614).epsilon(1e-13));
}
