#include "train/trainer.h"


#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/build_info.h"
#include "core/duration.h"
#include "core/progress_bar.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "dist/communicator.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/run_status.h"

namespace mtbert {

namespace {

// Each task's batch order gets its own stream of randomness from the run's seed.
uint64_t task_seed(uint64_t seed, size_t task_index) { return seed * 1000003ULL + 7919ULL * (task_index + 1); }

}  // namespace

const char* train_end_name(TrainEnd end) {
  switch (end) {
    case TrainEnd::finished: return "finished";
    case TrainEnd::early_stopped: return "early_stopped";
    case TrainEnd::interrupted: return "interrupted";
  }
  return "?";
}

Trainer::Trainer(Experiment& experiment, RunDirectory run, Communicator* comm)
    : e_(experiment), run_(std::move(run)), comm_(comm && comm->world_size() > 1 ? comm : nullptr) {
  const TrainSection& t = e_.config.train;
  load_split(e_, Split::train);
  load_split(e_, Split::dev);
  load_split(e_, Split::test);

  std::vector<SamplerTask> sampler_tasks;
  for (size_t i = 0; i < e_.tasks.size(); ++i) {
    TaskRuntime& task = e_.tasks[i];
    if (!task.has(Split::train)) continue;
    BatchingOptions options;
    // train.batch_size is per rank: the ranks share out batches of
    // batch_size x world_size, planned alike on every rank.
    options.batch_size = t.batch_size * world_size();
    options.bucket_by_length = t.bucket_by_length;
    options.seed = task_seed(e_.config.seed, i);
    options.shards = world_size();
    options.shard = comm_ ? comm_->rank() : 0;
    auto stream = std::make_unique<BatchStream>(task.encoded.at(Split::train), options);
    sampler_tasks.push_back({task.name(), static_cast<int64_t>(task.encoded.at(Split::train).examples.size()),
                             stream->batches_per_pass()});
    sampler_tasks_.push_back(task.name());
    streams_[task.name()] = std::move(stream);
  }
  if (sampler_tasks.empty())
    throw UserError(fmt::format("{}: no task has a train split", e_.config.source.string()));
  const int64_t sampler_steps = TaskSampler::steps_per_epoch(t.sampler, sampler_tasks);
  optimizer_steps_per_epoch_ = (sampler_steps + t.grad_accumulation - 1) / t.grad_accumulation;
  total_optimizer_steps_ = t.max_steps > 0 ? t.max_steps : t.epochs * optimizer_steps_per_epoch_;
  // epochs: 0 with max_steps: as many epochs as max_steps needs, so that the
  // annealed sampler and the progress bar see the epochs the run will make.
  epochs_ = t.epochs > 0 ? t.epochs : (total_optimizer_steps_ + optimizer_steps_per_epoch_ - 1) / optimizer_steps_per_epoch_;
  sampler_ = std::make_unique<TaskSampler>(t.sampler, std::move(sampler_tasks), epochs_, e_.config.seed);

  step_ = std::make_unique<TrainStep>(e_.model, e_.config.tasks, t, e_.config.precision, e_.device,
                                      total_optimizer_steps_);
  eval_graphs_ = make_eval_graphs(e_);
  if (t.sampler.kind == SamplerKind::mixed && e_.config.tasks.size() > 1) spdlog::info("{}", step_->pass_plan());
  schedule_ = std::make_unique<LrSchedule>(t.schedule, t.lr, total_optimizer_steps_, optimizer_steps_per_epoch_);
  host_rng_.seed(e_.config.seed);
  for (const auto& [name, stream] : streams_) progress_.streams[name] = stream->state();
  progress_.world_size = world_size();
  if (comm_) {
    step_->enable_data_parallel(*comm_, static_cast<int64_t>(e_.config.distributed.bucket_mb * 1024 * 1024));
    start_ranks_alike(*comm_, *e_.model, e_.config.seed);
  }
}

bool Trainer::writes_run() const { return !comm_ || comm_->is_main(); }
int Trainer::world_size() const { return comm_ ? comm_->world_size() : 1; }

LossTally Trainer::run_losses() const { return comm_ ? step_->losses().summed(*comm_) : step_->losses(); }

std::vector<torch::Tensor> Trainer::rank_generators() {
  return comm_ ? gather_rank_generators(*comm_) : std::vector<torch::Tensor>{};
}

Trainer::~Trainer() = default;

TrainingStateRefs Trainer::state_refs() {
  TrainingStateRefs refs{e_.model.ptr(), &step_->optimizer(), &progress_, &host_rng_, step_->teacher_module()};
  refs.rank = comm_ ? comm_->rank() : 0;
  return refs;
}

void Trainer::restore_last_checkpoint() {
  load_checkpoint(run_, "last", state_refs());
  check_resumed_ranks(run_, progress_.world_size, world_size());
  // state.json's counts against this run's plan: past its end they would
  // index past an epoch's steps or train beyond the run.
  const std::filesystem::path state = run_.checkpoint_to_read("last") / "state.json";
  if (progress_.epoch > epochs_ + 1 || progress_.step_in_epoch > sampler_->steps_per_epoch() ||
      progress_.global_step > total_optimizer_steps_)
    throw UserError(fmt::format("{}: epoch {}, step {} of the epoch, {} optimizer steps: past the end of this run "
                                "({} epochs of {} steps, {} optimizer steps); the checkpoint does not belong to "
                                "this config",
                                state.string(), progress_.epoch, progress_.step_in_epoch, progress_.global_step,
                                epochs_, sampler_->steps_per_epoch(), total_optimizer_steps_));
  for (auto& [name, stream] : streams_) {
    auto it = progress_.streams.find(name);
    if (it == progress_.streams.end())
      throw UserError(fmt::format("{}: the checkpoint has no batch position for task {} (was the config changed?)",
                                  run_.root().string(), name));
    stream->restore(it->second);
  }
  // The checkpoint holds every rank's losses together: rank 0 carries them on,
  // the others start from zeros.
  if (writes_run()) step_->losses().restore(progress_);
  else step_->losses().reset();
  if (writes_run()) run_.truncate_metrics(progress_.global_step);
  spdlog::info("resuming epoch {} after {} of its {} steps ({} optimizer steps done in all)", progress_.epoch,
               progress_.step_in_epoch, sampler_->steps_per_epoch(), progress_.global_step);
}

int64_t Trainer::accumulate_batches(const std::vector<std::vector<int64_t>>& plan) {
  const auto steps = static_cast<int64_t>(plan.size());
  int64_t examples = 0;
  for (int64_t micro = 0; micro < e_.config.train.grad_accumulation && progress_.step_in_epoch < steps; ++micro) {
    std::vector<TaskBatch> batches;
    for (const int64_t task_index : plan[progress_.step_in_epoch]) {
      batches.push_back(streams_.at(sampler_tasks_[task_index])->next());
      examples += batches.back().global_size;
    }
    step_->accumulate(batches);
    ++progress_.step_in_epoch;
  }
  progress_.examples_seen += examples;
  return examples;
}

void Trainer::optimizer_step() {
  step_->apply(schedule_->lr_at(progress_.global_step) / e_.config.train.lr, progress_.global_step, host_rng_);
  ++progress_.global_step;
}

void Trainer::save_last() {
  progress_.train_seconds = session_start_seconds_ + (steady_seconds() - session_clock_start_);
  for (const auto& [name, stream] : streams_) progress_.streams[name] = stream->state();
  run_losses().save(progress_);
  const auto generators = rank_generators();
  if (!writes_run()) return;
  TrainingStateRefs refs = state_refs();
  if (comm_) refs.rank_generators = &generators;
  save_checkpoint(run_, "last", refs);
}

void Trainer::evaluate_and_checkpoint(double interval_seconds, int64_t interval_examples) {
  Evaluation dev = evaluate(e_, Split::dev, comm_, eval_graphs_.get());
  const double lr = schedule_->lr_at(std::max<int64_t>(progress_.global_step - 1, 0));
  nlohmann::json row = {
      {"step", progress_.global_step},
      {"epoch", progress_.epoch},
      {"lr", lr},
      {"train_loss", run_losses().mean_json()},
      {"dev", evaluation_json(dev)},
      {"examples_per_second", interval_seconds > 0 ? interval_examples / interval_seconds : 0.0},
      {"eval_seconds", dev.seconds},
  };
  if (dev.has_overall) row["overall"] = dev.overall;
  if (writes_run()) run_.append_metrics(row);
  step_->losses().reset();

  // Without labeled dev data every evaluation is "the best": the last wins.
  const double score = dev.has_overall ? dev.overall : 0.0;
  if (!dev.has_overall || score > progress_.best_score) {
    progress_.best_score = score;
    progress_.best_step = progress_.global_step;
    progress_.best_epoch = progress_.epoch;
    progress_.evals_without_improvement = 0;
    if (writes_run()) save_checkpoint(run_, "best", TrainingStateRefs{e_.model.ptr(), nullptr, &progress_});
  } else {
    ++progress_.evals_without_improvement;
  }
  std::string line = fmt::format("step {} epoch {}:", progress_.global_step, progress_.epoch);
  for (const auto& task : dev.tasks)
    if (task.labeled) line += fmt::format(" {} {:.4f}", task.task, task.value);
  if (dev.has_overall) line += fmt::format("  overall {:.4f} (best {:.4f} at step {})", dev.overall,
                                           progress_.best_score, progress_.best_step);
  if (writes_run()) spdlog::info("{}", line);
}

TrainEnd Trainer::train(const TrainerHooks& hooks) {
  const TrainSection& t = e_.config.train;
  session_start_seconds_ = progress_.train_seconds;
  session_clock_start_ = steady_seconds();
  e_.model->train();
  double interval_start = steady_seconds();  // the interval since the last evaluation: its start, its examples
  int64_t interval_examples = 0;
  auto reached_max_steps = [&] { return t.max_steps > 0 && progress_.global_step >= t.max_steps; };
  auto patience_exhausted = [&] {
    return t.early_stopping_patience > 0 && progress_.evals_without_improvement >= t.early_stopping_patience;
  };
  auto eval_now = [&] {
    evaluate_and_checkpoint(steady_seconds() - interval_start, interval_examples);
    interval_start = steady_seconds();
    interval_examples = 0;
  };
  auto evaluated_at_this_step = [&] {
    return t.eval_every_steps > 0 && progress_.global_step % t.eval_every_steps == 0;
  };
  // A stop request reaches the ranks at different moments: they stop together
  // at the first step any of them saw it.
  auto stop_now = [&] {
    const bool requested = hooks.stop_requested && hooks.stop_requested();
    return comm_ ? comm_->any(requested) : requested;
  };
  const int64_t session_first_step = progress_.global_step;
  const int64_t accumulation = t.grad_accumulation;
  std::vector<std::vector<int64_t>> plan;  // the tasks of each step of progress_.epoch
  int64_t planned_epoch = 0;
  std::unique_ptr<Progress> bar;

  // One optimizer step per turn (of grad_accumulation batches, fewer at an
  // epoch's end); at an epoch's end, or at max_steps, the epoch's evaluation
  // and checkpoint. A run resumed at an epoch's end starts with those.
  while (progress_.epoch <= epochs_ && !reached_max_steps()) {
    if (planned_epoch != progress_.epoch) {
      plan = sampler_->plan_epoch(progress_.epoch);
      planned_epoch = progress_.epoch;
      // The bar counts this epoch's optimizer steps, up to max_steps where
      // that ends the epoch early.
      const int64_t done = (progress_.step_in_epoch + accumulation - 1) / accumulation;
      int64_t total = (static_cast<int64_t>(plan.size()) + accumulation - 1) / accumulation;
      if (t.max_steps > 0) total = std::min(total, done + t.max_steps - progress_.global_step);
      bar.reset();
      if (hooks.show_progress)
        bar = std::make_unique<Progress>(fmt::format("epoch {}/{}", progress_.epoch, epochs_), total);
    }
    const auto steps = static_cast<int64_t>(plan.size());
    if (progress_.step_in_epoch < steps) {
      interval_examples += accumulate_batches(plan);
      optimizer_step();
      if (comm_ && writes_run() && progress_.global_step == session_first_step + 1)
        spdlog::info("data-parallel over {} ranks: {} all-reduce call(s), {:.2f} MB of gradients per step",
                     world_size(), step_->last_all_reduce_calls(), step_->last_all_reduce_bytes() / 1e6);
      if (bar) {
        const double seconds = steady_seconds() - interval_start;
        bar->update((progress_.step_in_epoch + accumulation - 1) / accumulation,
                    fmt::format("{:.0f} ex/s  lr {:.2e}", seconds > 0 ? interval_examples / seconds : 0.0,
                                schedule_->lr_at(progress_.global_step - 1)));
      }
      if (evaluated_at_this_step()) {
        eval_now();
        save_last();
        if (patience_exhausted()) return TrainEnd::early_stopped;
      }
      if (!reached_max_steps() && stop_now()) {
        save_last();
        if (writes_run())
          spdlog::warn("stopped at step {}: checkpoint saved; continue with mtbert train --resume {}{}",
                       progress_.global_step, run_.root().string(), resume_ranks_hint(world_size()));
        return TrainEnd::interrupted;
      }
      if (!reached_max_steps() && progress_.step_in_epoch < steps) continue;
    }
    // The epoch's end (or max_steps): evaluated unless every N steps already
    // did at this very step; the row carries the epoch just trained.
    if (bar) bar->finish(fmt::format("{} optimizer steps", progress_.global_step));
    bar.reset();
    if (step_->captured_graphs() > 0)
      spdlog::info("train.cuda_graphs: {} CUDA graphs of the step captured so far (one per plan of passes and per "
                   "update), {} of evaluation (one per task and shape)",
                   step_->captured_graphs(), eval_graphs_ ? eval_graphs_->graphs() : 0);
    if (!evaluated_at_this_step()) eval_now();
    if (progress_.step_in_epoch >= steps) {
      ++progress_.epoch;
      progress_.step_in_epoch = 0;
    }
    save_last();
    if (patience_exhausted()) return TrainEnd::early_stopped;
  }
  return TrainEnd::finished;
}

nlohmann::json Trainer::summary(const std::string& status, const std::string& command, const nlohmann::json& test) const {
  nlohmann::json best = nlohmann::json::object();
  for (const auto& row : run_.read_metrics()) {
    if (row.value("step", int64_t{-1}) != progress_.best_step) continue;
    best = {{"step", row["step"]}, {"epoch", row["epoch"]}, {"dev", row["dev"]}};
    if (row.contains("overall")) best["overall"] = row["overall"];
  }
  return {
      {"name", e_.config.name},
      {"status", status},
      {"tags", e_.config.tags},
      {"best", best},
      {"test", test},
      {"steps", progress_.global_step},
      {"epochs_completed", progress_.epoch - 1},
      {"examples_seen", progress_.examples_seen},
      {"train_seconds", progress_.train_seconds},
      {"parameters", parameter_counts(e_)},
      {"command", command},
      {"working_directory", e_.working_directory.string()},
      {"git_revision", git_revision()},
      {"mtbert_version", MTBERT_VERSION},
      {"torch_version", torch_version_string()},
      {"device", e_.device.str()},
      {"threads", at::get_num_threads()},
      {"blas_threads", blas_thread_count() >= 0 ? nlohmann::json(blas_thread_count()) : nlohmann::json()},
      {"ranks", world_size()},
  };
}

nlohmann::json Trainer::finish(TrainEnd end, const std::string& command) {
  if (end == TrainEnd::interrupted) {
    auto s = summary("interrupted", command, nlohmann::json::object());
    if (writes_run()) run_.write_summary(s);
    return s;
  }
  progress_.finished = true;
  save_last();
  if (comm_) comm_->barrier();  // rank 0's checkpoints are on disk for every rank to read
  // Predictions and test metrics come from the best checkpoint, eagerly
  // (as mtbert eval computes them: the unpadded batches' own figures).
  load_checkpoint_weights(run_, run_.has_checkpoint("best") ? "best" : "last", e_.model);
  nlohmann::json test = nlohmann::json::object();
  for (const Split split : {Split::dev, Split::test}) {
    Evaluation evaluation = evaluate(e_, split, comm_);
    if (evaluation.tasks.empty()) continue;
    if (writes_run()) write_predictions(e_, evaluation, run_.predictions_dir());
    if (split == Split::test) test = evaluation_json(evaluation);
    if (split == Split::test && evaluation.has_overall) test["overall"] = evaluation.overall;
  }
  auto s = summary(train_end_name(end), command, test);
  if (writes_run()) run_.write_summary(s);
  return s;
}

}  // namespace mtbert
