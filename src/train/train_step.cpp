#include "train/train_step.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/autocast_scope.h"
#include "core/internal_error.h"
#include "core/user_error.h"
#include "data/join_batches.h"
#include "dist/communicator.h"
#include "dist/gradient_reducer.h"
#include "optim/gradient_clipping.h"
#include "optim/kept_gradients.h"
#include "optim/optimizer.h"
#include "train/step_graphs.h"
#include "train/step_inputs.h"

namespace mtbert {

namespace {

std::vector<std::string> task_names(const std::vector<TaskConfig>& tasks) {
  std::vector<std::string> names;
  for (const auto& t : tasks) names.push_back(t.name);
  return names;
}

}  // namespace

LossTally::LossTally(std::vector<std::string> tasks, torch::Device device) : tasks_(std::move(tasks)) {
  sums_ = torch::zeros({static_cast<int64_t>(tasks_.size())},
                       torch::TensorOptions().dtype(torch::kDouble).device(device));
  batches_.assign(tasks_.size(), 0);
}

void LossTally::reset() {
  sums_.zero_();
  std::fill(batches_.begin(), batches_.end(), 0);
}

size_t LossTally::index(const std::string& task) const {
  const auto it = std::find(tasks_.begin(), tasks_.end(), task);
  check_invariant(it != tasks_.end(), "LossTally: no task {}", task);
  return static_cast<size_t>(it - tasks_.begin());
}

void LossTally::add_loss(const std::string& task, const torch::Tensor& loss) {
  sums_.select(0, static_cast<int64_t>(index(task))).add_(loss.detach().to(torch::kDouble));
}

void LossTally::count_batch(const std::string& task) { ++batches_[index(task)]; }

LossTally LossTally::summed(Communicator& comm) const {
  std::vector<double> counts(batches_.begin(), batches_.end());
  auto all = torch::cat({sums_, torch::tensor(counts, sums_.options())}).to(comm.device());
  comm.all_reduce_sum(all);
  LossTally out(tasks_, sums_.device());
  const int64_t t = static_cast<int64_t>(tasks_.size());
  out.sums_ = all.narrow(0, 0, t).to(sums_.device());
  const auto summed_counts = all.narrow(0, t, t).cpu();
  for (int64_t k = 0; k < t; ++k) out.batches_[k] = static_cast<int64_t>(summed_counts[k].item<double>());
  return out;
}

nlohmann::json LossTally::mean_json() const {
  nlohmann::json out = nlohmann::json::object();
  const auto sums = sums_.cpu();
  for (size_t k = 0; k < tasks_.size(); ++k)
    if (batches_[k] > 0) out[tasks_[k]] = sums[k].item<double>() / static_cast<double>(batches_[k]);
  return out;
}

void LossTally::save(TrainProgress& progress) const {
  progress.interval_losses.clear();
  const auto sums = sums_.cpu();
  for (size_t k = 0; k < tasks_.size(); ++k)
    progress.interval_losses[tasks_[k]] = {sums[k].item<double>(), batches_[k]};
}

void LossTally::restore(const TrainProgress& progress) {
  reset();
  auto sums = torch::zeros_like(sums_, torch::kCPU);
  for (const auto& [task, l] : progress.interval_losses) {
    const auto it = std::find(tasks_.begin(), tasks_.end(), task);
    if (it == tasks_.end())
      throw UserError(fmt::format("the checkpoint holds training losses of task {}, which this run does not train "
                                  "(was the config changed?)", task));
    sums[it - tasks_.begin()] = l.first;
    batches_[it - tasks_.begin()] = l.second;
  }
  sums_.copy_(sums);
}

TrainStep::TrainStep(MultitaskModel model, std::vector<TaskConfig> tasks, const TrainSection& train,
                     Precision precision, torch::Device device, int64_t total_steps)
    : model_(std::move(model)),
      tasks_(std::move(tasks)),
      train_(train),
      precision_(precision),
      device_(device),
      total_steps_(total_steps),
      losses_(task_names(tasks_), device) {
  optimizer_ = make_optimizer(model_, train_);
  for (auto& group : optimizer_->param_groups()) base_lrs_.push_back(group.options().get_lr());
  for (const auto& p : model_->parameters())
    if (p.requires_grad()) trainable_.push_back(p);
  gradients_ = std::make_unique<KeptGradients>(trainable_);
  inputs_ = std::make_unique<StepInputs>(device_, /*keep_buffers=*/false);
  if (train_.cuda_graphs && device_.is_cuda()) graphs_ = make_step_graphs(device_, "the training step's work");
  else if (train_.cuda_graphs) spdlog::warn("train.cuda_graphs: the device is {}, not a GPU: steps run without graphs",
                                            device_.str());
  if (train_.pcgrad.enabled) {
    std::vector<torch::Tensor> shared;
    for (const auto& p : model_->shared_parameters())
      if (p.requires_grad()) shared.push_back(p);
    pcgrad_ = std::make_unique<PcgradAccumulator>(shared);
  }
  for (const auto& task : tasks_) {
    if (task.smart.enabled && task.smart.bregman) {
      teacher_ = std::make_unique<MomentumTeacher>(model_);
      teacher_config_ = task.smart;
      break;
    }
  }
}

TrainStep::~TrainStep() = default;

void TrainStep::enable_data_parallel(Communicator& comm, int64_t bucket_bytes) {
  // The reducer decides on the host which gradients travel, once per step.
  if (graphs_)
    throw UserError(fmt::format("train.cuda_graphs captures a single process's step, and this run has {} ranks: "
                                "set train.cuda_graphs: false",
                                comm.world_size()));
  world_size_ = comm.world_size();
  // With PCGrad the shared parameters' gradients travel as the task
  // gradients (averaged before the surgery); the reducer takes the rest.
  std::vector<torch::Tensor> reduced;
  std::vector<torch::Tensor> shared;
  if (pcgrad_) shared = model_->shared_parameters();
  for (const auto& p : trainable_) {
    const bool in_shared = std::any_of(shared.begin(), shared.end(),
                                       [&](const torch::Tensor& s) { return s.is_same(p); });
    if (!in_shared) reduced.push_back(p);
  }
  reducer_ = std::make_unique<GradientReducer>(comm, reduced, bucket_bytes);
}

int64_t TrainStep::last_all_reduce_calls() const { return reducer_ ? reducer_->calls() : 0; }
int64_t TrainStep::last_all_reduce_bytes() const { return reducer_ ? reducer_->bytes() : 0; }
size_t TrainStep::captured_graphs() const { return graphs_ ? graphs_->graphs() : 0; }

const TaskConfig& TrainStep::task(const std::string& name) const {
  for (const auto& t : tasks_)
    if (t.name == name) return t;
  throw UserError(fmt::format("no task \"{}\" to train", name));
}

torch::Tensor TrainStep::task_loss(const TaskConfig& config, const std::vector<TokenBatch>& inputs,
                                   const torch::Tensor& labels) {
  const AutocastScope autocast(device_, precision_ == Precision::bf16);
  const std::string& task = config.name;
  TaskHead head = model_->head(task);
  const bool smart = config.smart.enabled, bregman = teacher_ && smart && config.smart.bregman;
  if (!smart && !config.sift.enabled) return head->loss(model_(task, inputs), labels);

  const auto embedded = model_->embed(task, inputs);
  const auto outputs = model_->forward_embedded(task, embedded, inputs);
  auto loss = head->loss(outputs, labels);
  if (smart) loss = loss + smart_regularizer(model_, task, inputs, embedded, outputs, config.smart);
  if (config.sift.enabled) loss = loss + sift_regularizer(model_, task, inputs, outputs, config.sift);
  if (bregman) loss = loss + teacher_->bregman_term(model_, task, inputs, outputs, config.smart.bregman_weight);
  return loss;
}

std::string TrainStep::alone_reason(const TaskConfig& config) const {
  if (pcgrad_) return "PCGrad needs each task's own gradient";
  if (!train_.join_tasks) return "train.join_tasks is false";
  if (config.smart.enabled) return "SMART perturbs its own embeddings";
  if (config.sift.enabled) return "SiFT perturbs its own embeddings";
  return "";
}

std::string TrainStep::pass_plan() const {
  constexpr const char* kApart = "one encoder pass and one backward per task";
  if (pcgrad_ || !train_.join_tasks) return fmt::format("{}: {}", kApart, alone_reason(tasks_.front()));
  std::vector<std::string> joined, alone;
  for (const auto& t : tasks_) {
    const auto why = alone_reason(t);
    if (why.empty()) joined.push_back(t.name);
    else alone.push_back(fmt::format("{} ({})", t.name, why));
  }
  if (joined.size() < 2) return fmt::format("{}: {}", kApart, fmt::join(alone, ", "));
  std::string plan = fmt::format("tasks {} share one encoder pass and one backward per step", fmt::join(joined, ", "));
  if (std::isfinite(join_padding()))
    plan += fmt::format(" where their batches' lengths are close (at most {:.0f}% more tokens padded)",
                        100 * join_padding());
  if (!alone.empty()) plan += fmt::format("; their own pass: {}", fmt::join(alone, ", "));
  return plan;
}

double TrainStep::loss_scale(const TaskConfig& config, const TaskBatch& batch) const {
  const double shard_weight = batch.global_size > 0 ? static_cast<double>(batch.size() * world_size_) /
                                                          static_cast<double>(batch.global_size)
                                                    : 1.0;
  return config.loss_weight * shard_weight / static_cast<double>(train_.grad_accumulation);
}

void TrainStep::accumulate(const std::string& name, const TaskBatch& batch) {
  check_invariant(batch.task == name || batch.size() == 0, "TrainStep: a batch of {} handed in as {}", batch.task,
                  name);
  TaskBatch named = batch;
  named.task = name;
  accumulate(std::vector<TaskBatch>{std::move(named)});
}

void TrainStep::accumulate(const std::vector<TaskBatch>& batches) {
  // A graph reads the buffers its capture's inputs landed in: numbered from
  // each micro-step's first input, the same plan lands in the same buffers
  // whichever micro-step it is (the caller's stream copies the next inputs
  // only after the last graph has run: step_graphs.h).
  if (graphs_) inputs_->end_step();
  const auto passes = plan_passes(batches);
  if (graphs_) {
    run_graphed(passes);
  } else {
    if (!weight_casts_) weight_casts_ = std::make_unique<WeightCastCache>();
    for (const auto& pass : passes) run_pass(pass);
  }
  for (const auto& pass : passes)
    for (const auto* batch : pass.batches)
      if (batch->size() > 0) losses_.count_batch(batch->task);
}

std::vector<TrainStep::Pass> TrainStep::plan_passes(const std::vector<TaskBatch>& batches) {
  std::vector<Pass> passes;
  std::vector<const TaskBatch*> joined;
  for (const auto& batch : batches) {
    if (batch.size() > 0 && alone_reason(task(batch.task)).empty()) joined.push_back(&batch);
    else passes.push_back(place_alone(batch));
  }
  for (const auto& group : group_by_length(joined, join_padding())) {
    if (group.size() == 1) {
      passes.push_back(place_alone(*joined[group.front()]));
      continue;
    }
    std::vector<const TaskBatch*> members;
    for (const size_t i : group) members.push_back(joined[i]);
    passes.push_back(place_joined(std::move(members)));
  }
  return passes;
}

TrainStep::Pass TrainStep::place_alone(const TaskBatch& batch) {
  Pass pass;
  pass.batches = {&batch};
  if (batch.size() == 0) return pass;
  for (const auto& segment : batch.segments) pass.segments.push_back(inputs_->place(bucketed(segment, batch.pad_id)));
  pass.labels.push_back(inputs_->place(batch.labels));
  return pass;
}

TrainStep::Pass TrainStep::place_joined(std::vector<const TaskBatch*> batches) {
  Pass pass;
  pass.batches = std::move(batches);
  pass.joined = join_batches(pass.batches);
  pass.joined.tokens = inputs_->place(bucketed(pass.joined.tokens, pass.batches.front()->pad_id));
  for (const auto* batch : pass.batches) pass.labels.push_back(inputs_->place(batch->labels));
  return pass;
}

TokenBatch TrainStep::bucketed(const TokenBatch& tokens, int64_t pad_id) const {
  if (!graphs_) return tokens;
  return pad_to_multiple(tokens, train_.cuda_graph_length_multiple, model_->bert->config().max_position_embeddings,
                         pad_id);
}

void TrainStep::run_pass(const Pass& pass) {
  if (pass.joined.parts.empty()) {
    const TaskBatch& batch = *pass.batches.front();
    if (batch.size() == 0) {
      // An empty data-parallel shard: zeros, so that the ranks still exchange
      // the same gradients (and PCGrad the same number of task gradients).
      if (pcgrad_) pcgrad_->capture_task_gradient();
      return;
    }
    const TaskConfig& config = task(batch.task);
    auto loss = task_loss(config, pass.segments, pass.labels.front());
    (loss * loss_scale(config, batch)).backward();
    if (pcgrad_) pcgrad_->capture_task_gradient();
    losses_.add_loss(batch.task, loss);
    return;
  }
  std::vector<torch::Tensor> losses;
  {
    const AutocastScope autocast(device_, precision_ == Precision::bf16);
    const auto outputs = model_->forward_joined(pass.joined);
    for (size_t k = 0; k < pass.batches.size(); ++k)
      losses.push_back(model_->head(pass.batches[k]->task)->loss(outputs[k], pass.labels[k]));
  }
  torch::Tensor total;
  for (size_t k = 0; k < pass.batches.size(); ++k) {
    const auto weighted = losses[k] * loss_scale(task(pass.batches[k]->task), *pass.batches[k]);
    total = total.defined() ? total + weighted : weighted;
  }
  total.backward();
  for (size_t k = 0; k < pass.batches.size(); ++k) losses_.add_loss(pass.batches[k]->task, losses[k]);
}

void TrainStep::run_graphed(const std::vector<Pass>& passes) {
  // What the passes' graph depends on besides its tensors' values: per pass,
  // its tasks, their rows (a joint pass's split of its stacked rows, and
  // which label buffer each head reads) and loss weights, the shapes and
  // padding of its inputs.
  std::vector<std::string> parts;
  for (const auto& pass : passes) {
    std::vector<std::string> members;
    for (const auto* batch : pass.batches)
      members.push_back(fmt::format("{} {}x{} x{:a}", batch->task, batch->size(), batch->segments.size(),
                                    loss_scale(task(batch->task), *batch)));
    std::vector<std::string> shapes;
    if (!pass.joined.parts.empty()) shapes.push_back(graph_shape_key(pass.joined.tokens));
    for (const auto& segment : pass.segments) shapes.push_back(graph_shape_key(segment));
    parts.push_back(fmt::format("[{}] {}", fmt::join(members, ", "), fmt::join(shapes, ", ")));
  }
  const std::string key = fmt::format("{}", fmt::join(parts, "; "));
  const auto work = [&] {
    for (const auto& pass : passes) run_pass(pass);
  };
  // The passes' own record of reached parameters, apart from the step's
  // earlier passes: what the capture's backward reached is what every replay
  // of it reaches.
  const auto earlier = gradients_->take_reached();
  if (graphs_->run(key, work) == StepGraphs::Run::replayed) {
    gradients_->mark_reached(reached_by_graph_.at(key));
  } else {
    reached_by_graph_[key] = gradients_->take_reached();
    gradients_->mark_reached(reached_by_graph_[key]);
  }
  gradients_->mark_reached(earlier);
}

double TrainStep::join_padding() const {
  // On a CPU the arithmetic sets the pace: one pass over three equal-length
  // batches was 1.11x three passes (small, N = 64, fp32, 2 threads), so padding
  // beyond ~10% more tokens loses what the joint pass gains (real SST/Quora/STS
  // batches, each task's padded to its own length, ran at 0.5-0.7x joined to
  // the longest). On a GPU the host's dispatch does (the H200's bert-base step
  // left the GPU idle over half the time): every batch joins, padding and all.
  return device_.is_cuda() ? std::numeric_limits<double>::infinity() : 0.1;
}

void TrainStep::apply(double lr_factor, int64_t step, std::mt19937_64& rng) {
  weight_casts_.reset();
  gradients_->set_aside_unreached();
  if (reducer_) {
    reducer_->reset_counts();
    reducer_->average_gradients();
    if (pcgrad_)
      for (auto& g : pcgrad_->captured()) reducer_->average_flat(g);
  }
  if (pcgrad_) pcgrad_->apply(train_.pcgrad.reduction, rng);
  // Written before the update, outside its graph: a fill_ captured there
  // would write the capture's LR at every replay.
  for (size_t i = 0; i < base_lrs_.size(); ++i) optimizer_->set_lr(i, base_lrs_[i] * lr_factor);
  const auto update = [&] {
    // After averaging every rank holds the same gradients, so this local
    // norm is the global one.
    if (train_.grad_clip > 0) clip_gradients(trainable_, train_.grad_clip);
    optimizer_->step();
    gradients_->zero();
  };
  if (graphs_) {
    // AdamW moves the parameters with a gradient: one graph per such set.
    std::string key = "update ";
    for (const auto& p : trainable_) key += p.grad().defined() ? '1' : '0';
    graphs_->run(key, update);
  } else {
    update();
  }
  gradients_->give_back();
  inputs_->end_step();
  if (teacher_) teacher_->update(model_, bregman_momentum(teacher_config_, step, total_steps_));
}

}  // namespace mtbert
