#include "cli/run_reporting.h"

#include <fmt/format.h>

#include "core/duration.h"

namespace mtbert::cli {

std::string summary_table(const nlohmann::json& summary) {
  const nlohmann::json& best = summary.value("best", nlohmann::json::object());
  const nlohmann::json& dev = best.value("dev", nlohmann::json::object());
  const nlohmann::json& test = summary.value("test", nlohmann::json::object());
  std::string out = fmt::format("{:<10} {:<9} {:>8} {:>8}\n", "task", "metric", "dev", "test");
  for (const auto& [task, m] : dev.items()) {
    const std::string test_value =
        test.contains(task) ? fmt::format("{:.4f}", test[task].value("value", 0.0)) : std::string("-");
    out += fmt::format("{:<10} {:<9} {:>8.4f} {:>8}\n", task, m.value("metric", ""), m.value("value", 0.0), test_value);
  }
  if (best.contains("overall")) {
    const std::string test_overall =
        test.contains("overall") ? fmt::format("{:.4f}", test["overall"].get<double>()) : std::string("-");
    out += fmt::format("{:<10} {:<9} {:>8.4f} {:>8}\n", "overall", "", best["overall"].get<double>(), test_overall);
  }
  if (best.contains("step"))
    out += fmt::format("best dev at step {} (epoch {}); {} steps in {}\n", best["step"].get<int64_t>(),
                       best["epoch"].get<int64_t>(), summary.value("steps", int64_t{0}),
                       format_duration(summary.value("train_seconds", 0.0)));
  return out;
}

}  // namespace mtbert::cli
