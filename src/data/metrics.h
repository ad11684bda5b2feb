#pragma once
// The tasks' metrics, computed in double precision.
#include <cstdint>
#include <vector>

namespace mtbert {

// Fraction of equal entries. Empty input: 0.
double accuracy(const std::vector<int64_t>& predicted, const std::vector<int64_t>& gold);

// Pearson's r. Fewer than two points or zero variance: 0 (undefined, and no
// NaN should reach a metrics file).
double pearson(const std::vector<double>& predicted, const std::vector<double>& gold);

}  // namespace mtbert
