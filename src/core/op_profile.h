#pragma once
// Where a benchmark's time goes, per ATen operator: LibTorch's CPU profiler
// around some repetitions, each operator's self time (its own time minus
// that of the operators it called) summed per name. The same figure as
// PyTorch's `profiler.key_averages()` "Self CPU" column, which the Python
// peer reports, so the two tables compare op for op.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mtbert {

struct OpTime {
  std::string op;       // "aten::addmm"
  double calls = 0;     // per repetition
  double self_ms = 0;   // per repetition
};

// Runs `run` `repetitions` times under the profiler; the operators by self
// time, largest first.
std::vector<OpTime> profile_ops(const std::function<void()>& run, int64_t repetitions);

}  // namespace mtbert
