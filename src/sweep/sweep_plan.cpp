#include "sweep/sweep_plan.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/user_error.h"
#include "train/run_directory.h"

namespace mtbert {

namespace fs = std::filesystem;

const char* sweep_action_name(SweepAction action) {
  switch (action) {
    case SweepAction::skip: return "skip";
    case SweepAction::wait: return "leave (running)";
    case SweepAction::resume: return "resume";
    case SweepAction::restart: return "restart";
    case SweepAction::start: return "start";
  }
  return "?";
}

SweepAction action_for(RunStatus status) {
  switch (status) {
    case RunStatus::finished:
    case RunStatus::early_stopped: return SweepAction::skip;
    case RunStatus::running: return SweepAction::wait;
    case RunStatus::interrupted: return SweepAction::resume;
    case RunStatus::failed: return SweepAction::restart;
    case RunStatus::missing: break;
  }
  return SweepAction::start;
}

std::vector<std::string> start_arguments(const SweepRun& run, const std::vector<fs::path>& overlays) {
  std::vector<std::string> args{"train", run.experiment.string()};
  for (const auto& overlay : overlays) {
    args.push_back("--overlay");
    args.push_back(overlay.string());
  }
  for (const auto& o : run.overrides) args.push_back(o.text);
  args.push_back("--out");
  args.push_back(run.folder.string());
  return args;
}

std::vector<std::string> resume_arguments(const SweepRun& run) { return {"train", "--resume", run.folder.string()}; }

void clear_for_restart(const fs::path& folder) {
  const RunDirectory run(folder);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path() == run.train_log()) continue;
    fs::remove_all(entry.path(), ec);
    if (ec) throw UserError(fmt::format("cannot clear {} to restart it: {}", entry.path().string(), ec.message()));
  }
}

std::optional<std::string> resolved_config_change(const fs::path& folder, const std::string& resolved) {
  const RunDirectory run(folder);
  std::ifstream in(run.resolved_config(), std::ios::binary);
  if (!in) return std::nullopt;
  std::istringstream expected(resolved);
  // config.resolved.yaml is block YAML indented by two spaces, one key a
  // line: the keys of the enclosing lines give the changed value's key path.
  std::vector<std::string> path;
  std::string had, now;
  while (true) {
    const bool more_had = static_cast<bool>(std::getline(in, had));
    const bool more_now = static_cast<bool>(std::getline(expected, now));
    if (!more_had && !more_now) return std::nullopt;
    const std::string& line = more_now ? now : had;
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent != std::string::npos && line[indent] != '#' && colon != std::string::npos) {
      path.resize(std::min(path.size(), indent / 2));
      path.push_back(line.substr(indent, colon - indent));
    }
    if (more_had && more_now && had == now) continue;
    auto value = [](bool present, const std::string& text) {
      if (!present) return std::string("nothing");
      const size_t colon = text.find(':');
      const size_t start = text.find_first_not_of(' ', colon == std::string::npos ? 0 : colon + 1);
      return start == std::string::npos ? std::string("(a section)") : text.substr(start);
    };
    return fmt::format("{}: the run has {}, the sweep now gives {}", fmt::join(path, "."), value(more_had, had),
                       value(more_now, now));
  }
}

}  // namespace mtbert
