#include "train/train_progress.h"

#include <cmath>

#include <fmt/format.h>

#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

nlohmann::json to_json(const TrainProgress& p) {
  nlohmann::json streams = nlohmann::json::object();
  for (const auto& [task, s] : p.streams) streams[task] = {{"pass", s.pass}, {"cursor", s.cursor}};
  nlohmann::json losses = nlohmann::json::object();
  for (const auto& [task, l] : p.interval_losses) losses[task] = {{"sum", l.first}, {"batches", l.second}};
  return {
      {"epoch", p.epoch},
      {"step_in_epoch", p.step_in_epoch},
      {"global_step", p.global_step},
      {"examples_seen", p.examples_seen},
      {"train_seconds", p.train_seconds},
      // JSON has no infinity: "no best yet" is a null.
      {"best_score", p.best_step >= 0 ? nlohmann::json(p.best_score) : nlohmann::json()},
      {"best_step", p.best_step},
      {"best_epoch", p.best_epoch},
      {"evals_without_improvement", p.evals_without_improvement},
      {"finished", p.finished},
      {"world_size", p.world_size},
      {"streams", streams},
      {"interval_losses", losses},
  };
}

namespace {

// "[json.exception.type_error.302] type must be number, but is string" ->
// "type must be number, but is string".
std::string json_reason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

}  // namespace

TrainProgress train_progress_from_json(const nlohmann::json& j, const std::string& where) {
  constexpr const char* damaged = "the checkpoint is damaged (restore it, or start the run again)";
  auto read = [&](const nlohmann::json& from, const char* key, auto value) {
    try {
      return from.at(key).get<decltype(value)>();
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("{}: {}: {}; {}", where, key, json_reason(e), damaged));
    }
  };
  // A count read from the file, refused outside [min, max] (a damaged or
  // edited file: a negative step would index before an epoch's plan).
  auto count = [&](const nlohmann::json& from, const char* key, int64_t min, int64_t max = limits::kSteps * 1000) {
    const int64_t v = read(from, key, int64_t{0});
    if (v < min || v > max)
      throw UserError(fmt::format("{}: {}: {} is outside [{}, {}]; {}", where, key, v, min, max, damaged));
    return v;
  };
  auto number = [&](const nlohmann::json& from, const char* key) {
    const double v = read(from, key, 0.0);
    if (!std::isfinite(v)) throw UserError(fmt::format("{}: {}: not a finite number; {}", where, key, damaged));
    return v;
  };
  try {
    if (!j.is_object()) throw UserError(fmt::format("{}: not a JSON object; the checkpoint is damaged", where));
    TrainProgress p;
    p.epoch = count(j, "epoch", 1);
    p.step_in_epoch = count(j, "step_in_epoch", 0);
    p.global_step = count(j, "global_step", 0);
    p.examples_seen = count(j, "examples_seen", 0);
    p.train_seconds = number(j, "train_seconds");
    p.best_step = count(j, "best_step", -1);
    if (p.best_step >= 0) p.best_score = number(j, "best_score");
    p.best_epoch = count(j, "best_epoch", 0);
    p.evals_without_improvement = count(j, "evals_without_improvement", 0);
    p.finished = j.at("finished").get<bool>();
    // Checkpoints from before data-parallel training were single-process.
    p.world_size = j.contains("world_size") ? count(j, "world_size", 1, limits::kRanks) : 1;
    for (const auto& [task, s] : j.at("streams").items())
      p.streams[task] = BatchStream::State{count(s, "pass", 0), count(s, "cursor", 0)};
    for (const auto& [task, l] : j.at("interval_losses").items())
      p.interval_losses[task] = {number(l, "sum"), count(l, "batches", 0)};
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: malformed training state ({}); the checkpoint is damaged", where, json_reason(e)));
  }
}

}  // namespace mtbert
