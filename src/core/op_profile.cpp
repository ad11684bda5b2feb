#include "core/op_profile.h"

#include <algorithm>
#include <map>

#include <torch/csrc/autograd/profiler_legacy.h>

namespace mtbert {

namespace prof = torch::autograd::profiler;

std::vector<OpTime> profile_ops(const std::function<void()>& run, int64_t repetitions) {
  prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
  for (int64_t i = 0; i < repetitions; ++i) run();
  const prof::thread_event_lists threads = prof::disableProfilerLegacy();

  struct Total {
    int64_t calls = 0;
    double self_us = 0;
  };
  std::map<std::string, Total> totals;
  // Per thread the ranges nest: a pop closes the latest push. A range's self
  // time is its elapsed time minus its children's.
  struct Open {
    const prof::LegacyEvent* push;
    double children_us = 0;
  };
  for (const auto& events : threads) {
    std::vector<Open> stack;
    for (const auto& event : events) {
      if (event.kind() == prof::EventKind::PushRange) {
        stack.push_back({&event});
      } else if (event.kind() == prof::EventKind::PopRange && !stack.empty()) {
        const Open open = stack.back();
        stack.pop_back();
        const double elapsed = open.push->cpuElapsedUs(event);
        Total& total = totals[open.push->name()];
        ++total.calls;
        total.self_us += elapsed - open.children_us;
        if (!stack.empty()) stack.back().children_us += elapsed;
      }
    }
  }
  std::vector<OpTime> ops;
  const double reps = static_cast<double>(std::max<int64_t>(repetitions, 1));
  for (const auto& [name, total] : totals)
    ops.push_back({name, static_cast<double>(total.calls) / reps, total.self_us / 1000.0 / reps});
  std::sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.self_ms > b.self_ms; });
  return ops;
}

}  // namespace mtbert
