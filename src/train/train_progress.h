#pragma once
// Where a training run is: everything besides model, optimizer and random
// generators that resuming needs to continue exactly where it stopped.
#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "data/batching.h"

namespace mtbert {

struct TrainProgress {
  int64_t epoch = 1;          // the epoch in progress, 1-based
  int64_t step_in_epoch = 0;  // sampler steps of this epoch already taken
  int64_t global_step = 0;    // optimizer steps taken
  int64_t examples_seen = 0;
  double train_seconds = 0;   // wall time spent training, summed over resumes
  double best_score = -std::numeric_limits<double>::infinity();
  int64_t best_step = -1;
  int64_t best_epoch = 0;
  int64_t evals_without_improvement = 0;
  bool finished = false;
  // Data-parallel ranks of the run: batches are planned for all of them, so a
  // run resumes with as many.
  int64_t world_size = 1;
  std::map<std::string, BatchStream::State> streams;  // per task
  // Training loss sums and batch counts per task since the last evaluation.
  std::map<std::string, std::pair<double, int64_t>> interval_losses;
};

nlohmann::json to_json(const TrainProgress& progress);
// UserError naming `where` for a malformed state file.
TrainProgress train_progress_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace mtbert
