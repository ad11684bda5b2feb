#include "train/train_progress.h"

#include <fmt/format.h>

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

TrainProgress train_progress_from_json(const nlohmann::json& j, const std::string& where) {
  try {
    TrainProgress p;
    p.epoch = j.at("epoch").get<int64_t>();
    p.step_in_epoch = j.at("step_in_epoch").get<int64_t>();
    p.global_step = j.at("global_step").get<int64_t>();
    p.examples_seen = j.at("examples_seen").get<int64_t>();
    p.train_seconds = j.at("train_seconds").get<double>();
    p.best_step = j.at("best_step").get<int64_t>();
    if (p.best_step >= 0) p.best_score = j.at("best_score").get<double>();
    p.best_epoch = j.at("best_epoch").get<int64_t>();
    p.evals_without_improvement = j.at("evals_without_improvement").get<int64_t>();
    p.finished = j.at("finished").get<bool>();
    // Checkpoints from before data-parallel training were single-process.
    p.world_size = j.value("world_size", int64_t{1});
    for (const auto& [task, s] : j.at("streams").items())
      p.streams[task] = BatchStream::State{s.at("pass").get<int64_t>(), s.at("cursor").get<int64_t>()};
    for (const auto& [task, l] : j.at("interval_losses").items())
      p.interval_losses[task] = {l.at("sum").get<double>(), l.at("batches").get<int64_t>()};
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{}: malformed training state ({})", where, e.what()));
  }
}

}  // namespace mtbert
