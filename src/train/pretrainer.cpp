#include "train/pretrainer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/atomic_file.h"
#include "core/autocast_scope.h"
#include "core/build_info.h"
#include "core/duration.h"
#include "core/internal_error.h"
#include "core/input_file.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/progress_bar.h"
#include "core/runtime.h"
#include "core/thread_count.h"
#include "core/user_error.h"
#include "data/batching.h"
#include "dist/communicator.h"
#include "models/module_state.h"
#include "models/pretrained_model.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/experiment.h"
#include "train/run_status.h"

namespace mtbert {

namespace fs = std::filesystem;

namespace {

// The key of the loss tally in TrainProgress::interval_losses.
constexpr const char* kLossKey = "mlm";
// The held-out evaluation's masks come from their own generator, so that
// every evaluation scores the same tokens and training's stream is untouched.
constexpr uint64_t kEvaluationMaskSeed = 20240613;

// The generator that masks training batch `batch` of epoch `epoch`: seeded by
// the batch's place rather than drawn from a running stream, so that every
// rank masks a batch alike whatever it drew before (dropout draws per rank),
// and a resumed run needs no saved state to mask as an uninterrupted one.
at::Generator batch_masking_generator(uint64_t seed, int64_t epoch, int64_t batch) {
  // splitmix64 of the three: nearby batches get unrelated streams.
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch) * 0xBF58476D1CE4E5B9ULL +
               static_cast<uint64_t>(batch) * 0x94D049BB133111EBULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return at::detail::createCPUGenerator(x ^ (x >> 31));
}

std::vector<fs::path> tokenizer_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const char* name : {"vocab.txt", "spm.model", "tokenizer_config.json"})
    if (fs::exists(dir / name)) files.push_back(dir / name);
  return files;
}

MaskingOptions masking_options(const MaskingConfig& m) {
  return MaskingOptions{m.mask_prob, m.mask_token_fraction, m.random_token_fraction, m.whole_word};
}

// The corpus sources: the text files, then the named tasks' training files
// as the experiment gives them.
std::vector<CorpusSource> corpus_sources(const CorpusConfig& corpus, const fs::path& started_in) {
  std::vector<CorpusSource> sources;
  for (const auto& file : corpus.files) sources.push_back({path_from_run_start(file, started_in), ""});
  if (corpus.tasks.empty()) return sources;
  const std::string experiment_file = path_from_run_start(corpus.experiment, started_in);
  const ExperimentConfig experiment = load_experiment(experiment_file);
  for (const auto& name : corpus.tasks) {
    const auto task = std::find_if(experiment.tasks.begin(), experiment.tasks.end(),
                                   [&](const TaskConfig& t) { return t.name == name; });
    if (task == experiment.tasks.end())
      throw UserError(fmt::format("corpus.tasks: {} has no task \"{}\"", experiment_file, name));
    sources.push_back({path_from_run_start(task->train, started_in), task->type.empty() ? task->name : task->type});
  }
  return sources;
}

Pretraining assemble_pretraining(const PretrainConfig& config, const RunDirectory& run, const nlohmann::json& encoder_json) {
  Pretraining p;
  p.config = config;
  p.tokenizer = load_tokenizer(run.tokenizer_dir());
  p.tokenizer_files = tokenizer_files_in(run.tokenizer_dir());
  const ModelConfig model_config = model_config_from_json(encoder_json, run.model_config().string());
  check_tokenizer_fits(*p.tokenizer, model_config.vocab_size, run.tokenizer_dir().string());
  // Absolute positions are a table: longer segments would index past its end.
  if (model_config.has_position_embeddings() && config.corpus.max_length > model_config.max_position_embeddings)
    throw UserError(fmt::format("{}: corpus.max_length is {} but the model has only {} positions "
                                "(max_position_embeddings); lower max_length",
                                config.source.string(), config.corpus.max_length,
                                model_config.max_position_embeddings));
  torch::manual_seed(config.seed);
  p.model = MaskedLm(model_config);
  p.device = resolve_device(config.device);
  p.working_directory = fs::current_path();
  if (config.precision == Precision::bf16) {
    const std::string emulated = bf16_emulation_warning(p.device);
    if (!emulated.empty()) spdlog::warn("{}", emulated);
  }
  return p;
}

}  // namespace

Pretraining start_pretraining(const PretrainConfig& config, const RunDirectory& run) {
  write_text_atomically(run.resolved_config(), resolved_yaml(config));
  // The config's loader refuses train_from: [tasks] for pretraining.
  prepare_run_tokenizer(config.model, run.tokenizer_dir(), config.seed, config.source.string(),
                        []() -> fs::path { throw InternalError("pretraining has no tasks to train a tokenizer on"); });
  const auto tokenizer = load_tokenizer(run.tokenizer_dir());
  const nlohmann::json json = encoder_config_json(config.model, *tokenizer);
  write_text_atomically(run.model_config(), json_text(json, 2) + "\n");
  Pretraining p = assemble_pretraining(config, run, json);
  if (!config.model.pretrained.empty()) {
    // Continued pretraining: the folder's encoder (model.config may turn a
    // BERT into a DeBERTa-style encoder: what it adds starts fresh, logged),
    // and its MLM head when it has one.
    torch::manual_seed(config.seed);
    PretrainedModel pretrained = load_pretrained(config.model.pretrained, config.model.config);
    load_module_state(*p.model->bert, module_state(*pretrained.model),
                      (fs::path(config.model.pretrained) / "model.safetensors").string());
    if (!pretrained.mlm_head.empty()) {
      p.model->load_head(pretrained.mlm_head, config.model.pretrained + " (cls.predictions.*)");
    } else {
      spdlog::info("{} has no MLM head: cls.predictions.* start fresh", config.model.pretrained);
    }
  }
  p.model->to(p.device);
  return p;
}

Pretraining join_pretraining(const PretrainConfig& config, const RunDirectory& run) {
  Pretraining p = assemble_pretraining(config, run, read_json_file(run.model_config()));
  p.model->to(p.device);
  return p;
}

Pretraining reopen_pretraining(const RunDirectory& run) {
  Pretraining p = join_pretraining(load_pretrain_config(run.resolved_config()), run);
  if (fs::path started_in = run.started_in(); !started_in.empty()) p.working_directory = std::move(started_in);
  return p;
}

void write_mlm_folder(MaskedLm& model, const std::vector<fs::path>& tokenizer_files, const fs::path& dir) {
  save_pretrained(model->bert, dir, model->head_state());
  for (const auto& file : tokenizer_files)
    write_text_atomically(dir / file.filename(), read_input_file(file, limits::kTokenizerFileBytes, "tokenizer file"));
}

namespace {

// The token cache: rank 0 builds it (when it must) while the others wait at
// a barrier, then open it, so that no two processes write it at once.
TokenCache open_corpus(const Pretraining& p, const RunDirectory& run, Communicator* comm) {
  const bool waits = comm && !comm->is_main();
  if (waits) comm->barrier();
  // The cache is written as well as read: relative to where the run started,
  // whether or not it is there now.
  const fs::path cache_dir(p.config.corpus.cache_dir);
  const fs::path dir = cache_dir.empty()                                         ? run.root() / "cache"
                       : cache_dir.is_relative() && !p.working_directory.empty() ? p.working_directory / cache_dir
                                                                                  : cache_dir;
  TokenCache cache = TokenCache::open_or_build(dir, corpus_sources(p.config.corpus, p.working_directory),
                                               *p.tokenizer, p.tokenizer_files, p.config.corpus.max_length);
  if (comm && !waits) comm->barrier();
  return cache;
}

}  // namespace

Pretrainer::Pretrainer(Pretraining& pretraining, RunDirectory run, Communicator* comm)
    : p_(pretraining),
      run_(std::move(run)),
      comm_(comm && comm->world_size() > 1 ? comm : nullptr),
      corpus_(open_corpus(p_, run_, comm_)),
      vocabulary_(vocabulary_traits(*p_.tokenizer)),
      masking_(masking_options(p_.config.masking)) {
  const auto& c = p_.config;
  const int64_t stride =
      c.corpus.holdout_fraction > 0 ? std::max<int64_t>(2, std::llround(1.0 / c.corpus.holdout_fraction)) : 0;
  for (int64_t i = 0; i < corpus_.segments(); ++i)
    (stride > 0 && i % stride == stride - 1 ? heldout_indices_ : train_indices_).push_back(i);
  if (train_indices_.empty()) throw UserError(fmt::format("{}: the corpus has no training segments", c.source.string()));
  spdlog::info("corpus: {} segments ({} tokens) in {}; {} for training, {} held out", corpus_.segments(),
               corpus_.tokens(), corpus_.folder().string(), train_indices_.size(), heldout_indices_.size());

  step_ = std::make_unique<MlmStep>(p_.model, c.train, c.precision, p_.device);
  const int64_t global_batch = c.train.batch_size * world_size();
  const int64_t batches_per_epoch = (train_segments() + global_batch - 1) / global_batch;
  const int64_t steps_per_epoch = std::max<int64_t>(1, batches_per_epoch / c.train.grad_accumulation);
  schedule_ = std::make_unique<LrSchedule>(c.train.schedule, c.train.lr, c.train.max_steps, steps_per_epoch);
  host_rng_.seed(c.seed);
  progress_.world_size = world_size();
  if (comm_) {
    step_->enable_data_parallel(*comm_, static_cast<int64_t>(c.distributed.bucket_mb * 1024 * 1024));
    start_ranks_alike(*comm_, *p_.model, c.seed);
  }
}

Pretrainer::~Pretrainer() = default;

bool Pretrainer::writes_run() const { return !comm_ || comm_->is_main(); }
int Pretrainer::world_size() const { return comm_ ? comm_->world_size() : 1; }

MaskedBatch Pretrainer::my_rows(const MaskedBatch& whole) const {
  if (!comm_) return whole;
  // The same contiguous shares as a training run's batches (data/batching.h).
  std::vector<int64_t> rows(static_cast<size_t>(whole.inputs.input_ids.size(0)));
  std::iota(rows.begin(), rows.end(), 0);
  rows = batch_shard(rows, comm_->rank(), comm_->world_size());
  return rows.empty() ? masked_rows(whole, 0, 0) : masked_rows(whole, rows.front(), rows.back() + 1);
}

std::pair<double, int64_t> Pretrainer::run_tally() {
  auto tally = progress_.interval_losses[kLossKey];
  if (!comm_) return tally;
  // Each rank's sum holds its shares of the batches' losses; the batches are
  // every rank's.
  auto sum = torch::tensor(tally.first, torch::kDouble).to(comm_->device());
  comm_->all_reduce_sum(sum);
  return {sum.cpu().item<double>(), tally.second};
}

std::vector<std::vector<int64_t>> Pretrainer::segment_ids(const std::vector<int64_t>& indices) const {
  std::vector<std::vector<int64_t>> segments;
  segments.reserve(indices.size());
  for (const int64_t i : indices) {
    int64_t length = 0;
    const uint32_t* ids = corpus_.segment(i, &length);
    segments.emplace_back(ids, ids + length);
  }
  return segments;
}

std::vector<int64_t> Pretrainer::epoch_order(int64_t epoch) const {
  std::vector<int64_t> order = train_indices_;
  std::mt19937_64 rng(p_.config.seed * 1000003ULL + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

MlmEvaluation Pretrainer::evaluate() {
  MlmEvaluation result;
  if (heldout_indices_.empty()) return result;
  const auto& c = p_.config;
  const int64_t count = c.train.eval_segments > 0
                            ? std::min<int64_t>(c.train.eval_segments, static_cast<int64_t>(heldout_indices_.size()))
                            : static_cast<int64_t>(heldout_indices_.size());
  at::Generator generator = at::detail::createCPUGenerator(kEvaluationMaskSeed);
  torch::NoGradGuard no_grad;
  const WeightCastCache weight_casts;  // bf16: each weight cast once for all the batches
  p_.model->eval();
  // Sums over the masked tokens: loss, correct, count (over ranks, added up).
  double loss_sum = 0, correct = 0, tokens = 0;
  const int64_t global_batch = c.train.batch_size * world_size();
  for (int64_t start = 0; start < count; start += global_batch) {
    const std::vector<int64_t> indices(heldout_indices_.begin() + start,
                                       heldout_indices_.begin() + std::min(count, start + global_batch));
    const MaskedBatch batch = my_rows(mask_segments(segment_ids(indices), vocabulary_, masking_, generator));
    if (batch.labels.size(0) == 0) continue;
    const AutocastScope autocast(p_.device, c.precision == Precision::bf16);
    auto logits =
        p_.model->logits_at(batch.inputs.to(p_.device), to_device(batch.positions, p_.device)).to(torch::kFloat);
    const auto labels = batch.labels.to(p_.device);
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += static_cast<double>(logits.argmax(-1).eq(labels).sum().item<int64_t>());
    tokens += static_cast<double>(labels.size(0));
  }
  p_.model->train();
  if (comm_) {
    auto sums = torch::tensor(std::vector<double>{loss_sum, correct, tokens}, torch::kDouble).to(comm_->device());
    comm_->all_reduce_sum(sums);
    sums = sums.cpu();
    loss_sum = sums[0].item<double>();
    correct = sums[1].item<double>();
    tokens = sums[2].item<double>();
  }
  result.tokens = static_cast<int64_t>(tokens);
  result.loss = loss_sum / std::max(1.0, tokens);
  result.accuracy = correct / std::max(1.0, tokens);
  return result;
}

void Pretrainer::optimizer_step() {
  step_->apply(schedule_->lr_at(progress_.global_step) / p_.config.train.lr);
  ++progress_.global_step;
}

void Pretrainer::save_last() {
  progress_.train_seconds = session_start_seconds_ + (steady_seconds() - session_clock_start_);
  // The checkpoint holds every rank's tally together (rank 0 carries it on
  // after a resume), and every rank's generator.
  auto& tally = progress_.interval_losses[kLossKey];
  const auto own = tally;
  tally = run_tally();
  const auto generators = comm_ ? gather_rank_generators(*comm_) : std::vector<torch::Tensor>{};
  if (writes_run()) {
    TrainingStateRefs refs{p_.model.ptr(), &step_->optimizer(), &progress_, &host_rng_};
    if (comm_) refs.rank_generators = &generators;
    save_checkpoint(run_, "last", refs);
  }
  tally = own;
}

void Pretrainer::restore_last_checkpoint() {
  TrainingStateRefs refs{p_.model.ptr(), &step_->optimizer(), &progress_, &host_rng_};
  refs.rank = comm_ ? comm_->rank() : 0;
  load_checkpoint(run_, "last", refs);
  check_resumed_ranks(run_, progress_.world_size, world_size());
  // state.json's counts against this run's plan.
  const int64_t global_batch = p_.config.train.batch_size * world_size();
  const int64_t batches = (train_segments() + global_batch - 1) / global_batch;
  if (progress_.step_in_epoch > batches || progress_.global_step > p_.config.train.max_steps)
    throw UserError(fmt::format("{}: step {} of the epoch, {} optimizer steps: past the end of this run (epochs of "
                                "{} batches, {} steps); the checkpoint does not belong to this config",
                                (run_.checkpoint_to_read("last") / "state.json").string(), progress_.step_in_epoch,
                                progress_.global_step, batches, p_.config.train.max_steps));
  if (!writes_run()) progress_.interval_losses[kLossKey].first = 0;
  if (writes_run()) run_.truncate_metrics(progress_.global_step);
  spdlog::info("resuming at step {} of {}", progress_.global_step, p_.config.train.max_steps);
}

void Pretrainer::evaluate_and_checkpoint(double interval_seconds, int64_t interval_tokens) {
  const MlmEvaluation heldout = evaluate();
  const auto losses = run_tally();
  nlohmann::json row = {
      {"step", progress_.global_step},
      {"epoch", progress_.epoch},
      {"lr", schedule_->lr_at(std::max<int64_t>(progress_.global_step - 1, 0))},
      {"train_loss", {{"mlm", losses.second > 0 ? losses.first / static_cast<double>(losses.second) : 0.0}}},
      {"tokens_per_second", interval_seconds > 0 ? static_cast<double>(interval_tokens) / interval_seconds : 0.0},
  };
  if (heldout.tokens > 0) {
    row["dev"] = {{"mlm", {{"loss", heldout.loss},
                           {"accuracy", heldout.accuracy},
                           {"perplexity", std::exp(heldout.loss)},
                           {"tokens", heldout.tokens}}}};
    spdlog::info("step {}: held-out MLM loss {:.4f}, accuracy {:.4f}, perplexity {:.1f}", progress_.global_step,
                 heldout.loss, heldout.accuracy, std::exp(heldout.loss));
  }
  if (writes_run()) run_.append_metrics(row);
  progress_.interval_losses[kLossKey] = {0.0, 0};
  save_last();
}

TrainEnd Pretrainer::train(const TrainerHooks& hooks) {
  const auto& t = p_.config.train;
  session_start_seconds_ = progress_.train_seconds;
  session_clock_start_ = steady_seconds();
  p_.model->train();
  double interval_start = steady_seconds();
  int64_t interval_tokens = 0, session_tokens = 0;
  std::unique_ptr<Progress> bar;
  if (hooks.show_progress) bar = std::make_unique<Progress>("pretraining steps", t.max_steps);
  auto& tally = progress_.interval_losses[kLossKey];

  // A stop request reaches the ranks at different moments: they stop together
  // at the first step any of them saw it.
  auto stop_now = [&] {
    const bool requested = hooks.stop_requested && hooks.stop_requested();
    return comm_ ? comm_->any(requested) : requested;
  };
  const int64_t global_batch = t.batch_size * world_size();
  while (progress_.global_step < t.max_steps) {
    const std::vector<int64_t> order = epoch_order(progress_.epoch);
    const int64_t batches = (static_cast<int64_t>(order.size()) + global_batch - 1) / global_batch;
    while (progress_.step_in_epoch < batches && progress_.global_step < t.max_steps) {
      const int64_t start = progress_.step_in_epoch * global_batch;
      const std::vector<int64_t> indices(order.begin() + start,
                                         order.begin() + std::min<int64_t>(start + global_batch, order.size()));
      const MaskedBatch whole = mask_segments(segment_ids(indices), vocabulary_, masking_,
                                              batch_masking_generator(p_.config.seed, progress_.epoch,
                                                                      progress_.step_in_epoch));
      const MaskedBatch batch = my_rows(whole);
      if (const int64_t chosen = batch.labels.size(0); chosen > 0) {
        // This rank's share of the batch's masked tokens: its mean loss
        // weighed by it (times the ranks, which the average divides by) makes
        // the averaged gradient the whole batch's.
        const double share = static_cast<double>(chosen) / static_cast<double>(whole.labels.size(0));
        tally.first += step_->accumulate(batch, share * world_size()).item<double>() * share;
      }
      tally.second += 1;
      const int64_t tokens = whole.inputs.attention_mask.sum().item<int64_t>();
      interval_tokens += tokens;
      session_tokens += tokens;
      progress_.examples_seen += static_cast<int64_t>(indices.size());
      ++progress_.step_in_epoch;
      if (progress_.step_in_epoch % t.grad_accumulation != 0 && progress_.step_in_epoch < batches) continue;
      optimizer_step();
      if (bar) {
        const double seconds = steady_seconds() - session_clock_start_;
        const double tokens_per_second = seconds > 0 ? static_cast<double>(session_tokens) / seconds : 0.0;
        // A rank's tally holds only its share of the loss until evaluations add them up.
        bar->update(progress_.global_step,
                    comm_ ? fmt::format("{:.0f} tok/s", tokens_per_second)
                          : fmt::format("loss {:.3f}  {:.0f} tok/s",
                                        tally.first / static_cast<double>(tally.second), tokens_per_second));
      }
      if (progress_.global_step % t.eval_every_steps == 0 || progress_.global_step == t.max_steps) {
        evaluate_and_checkpoint(steady_seconds() - interval_start, interval_tokens);
        interval_start = steady_seconds();
        interval_tokens = 0;
      }
      if (stop_now()) {
        save_last();
        if (bar) bar->finish("stopped");
        if (writes_run())
          spdlog::warn("stopped at step {}: checkpoint saved; continue with mtbert pretrain --resume {}{}",
                       progress_.global_step, run_.root().string(), resume_ranks_hint(world_size()));
        return TrainEnd::interrupted;
      }
    }
    if (progress_.step_in_epoch >= batches) {
      ++progress_.epoch;
      progress_.step_in_epoch = 0;
    }
  }
  if (bar) bar->finish(fmt::format("{} optimizer steps", progress_.global_step));
  return TrainEnd::finished;
}

nlohmann::json Pretrainer::finish(TrainEnd end, const std::string& command) {
  const fs::path folder = run_.root() / "model";
  if (end != TrainEnd::interrupted) {
    progress_.finished = true;
    save_last();
  }
  if (!writes_run()) return nlohmann::json::object();
  if (end != TrainEnd::interrupted) {
    write_mlm_folder(p_.model, p_.tokenizer_files, folder);
    spdlog::info("wrote the pretrained model folder {}", folder.string());
  }
  nlohmann::json last = nlohmann::json::object();
  for (const auto& row : run_.read_metrics()) last = row;
  nlohmann::json summary = {
      {"name", p_.config.name},
      {"status", end == TrainEnd::interrupted ? "interrupted" : train_end_name(end)},
      {"kind", "pretrain"},
      {"tags", p_.config.tags},
      {"last", last},
      {"steps", progress_.global_step},
      {"segments_seen", progress_.examples_seen},
      {"ranks", world_size()},
      {"train_seconds", progress_.train_seconds},
      {"corpus", {{"segments", corpus_.segments()}, {"tokens", corpus_.tokens()}, {"cache", corpus_.folder().string()}}},
      {"model_folder", end == TrainEnd::interrupted ? "" : folder.string()},
      {"command", command},
      {"working_directory", p_.working_directory.string()},
      {"git_revision", git_revision()},
      {"mtbert_version", MTBERT_VERSION},
      {"torch_version", torch_version_string()},
      {"device", p_.device.str()},
      {"threads", at::get_num_threads()},
      {"blas_threads", blas_thread_count() >= 0 ? nlohmann::json(blas_thread_count()) : nlohmann::json()},
  };
  run_.write_summary(summary);
  return summary;
}

}  // namespace mtbert
