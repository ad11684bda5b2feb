#pragma once
// What train and eval print at the end: a table of metrics from a run's
// summary.json.
#include <string>

#include <nlohmann/json.hpp>

namespace mtbert::cli {

// Best dev metrics (and test metrics where labeled) as a plain-text table.
std::string summary_table(const nlohmann::json& summary);

}  // namespace mtbert::cli
