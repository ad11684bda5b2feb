#include "train/experiment.h"

#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "core/atomic_file.h"
#include "core/autocast_scope.h"
#include "core/input_file.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/runtime.h"
#include "core/safetensors.h"
#include "core/torch_compat.h"
#include "core/user_error.h"
#include "dist/launch_env.h"
#include "models/module_state.h"
#include "models/pretrained_model.h"
#include "text/sentencepiece_training.h"
#include "train/checkpoint.h"
#include "train/pretrained_fit.h"

namespace mtbert {

namespace fs = std::filesystem;

const char* split_name(Split split) {
  switch (split) {
    case Split::train: return "train";
    case Split::dev: return "dev";
    case Split::test: return "test";
  }
  return "?";
}

const TaskRuntime& Experiment::task(const std::string& name) const {
  for (const auto& t : tasks)
    if (t.name() == name) return t;
  std::string known;
  for (const auto& t : tasks) known += (known.empty() ? "" : ", ") + t.name();
  throw UserError(fmt::format("the experiment has no task \"{}\" (its tasks: {})", name, known));
}

TaskRuntime& Experiment::task(const std::string& name) {
  return const_cast<TaskRuntime&>(static_cast<const Experiment&>(*this).task(name));
}

void check_device_available(DeviceChoice device) {
  if (device != DeviceChoice::cuda || torch::cuda::is_available()) return;
#ifdef MTBERT_WITH_CUDA
  throw UserError("device: cuda, but this machine shows its CUDA LibTorch no GPU (see nvidia-smi and "
                  "CUDA_VISIBLE_DEVICES); use device=cpu or auto to train on the CPU");
#else
  // Debian's LibTorch is built without CUDA: no GPU can help this binary.
  throw UserError(fmt::format("device: cuda, but this mtbert is built against a LibTorch without CUDA ({}): build it "
                              "against a CUDA LibTorch (docs/building.md, \"Building against a CUDA LibTorch\"), or use "
                              "device=cpu or auto to train on the CPU",
                              torch_version_string()));
#endif
}

torch::Device resolve_device(DeviceChoice device) {
  if (device == DeviceChoice::cpu) return torch::kCPU;
  check_device_available(device);
  const bool cuda = torch::cuda::is_available();
  if (!cuda) return torch::kCPU;
  const LaunchEnv env = launch_env();
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (env.local_rank >= gpus)
    throw UserError(fmt::format("rank {} is local rank {} on its machine, which shows {} GPU(s): start at most {} "
                                "rank(s) per machine (see CUDA_VISIBLE_DEVICES)",
                                env.rank, env.local_rank, gpus, gpus));
  const torch::Device gpu(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  compat::set_current_device(gpu);
  return gpu;
}

namespace {

const std::string& split_path(const TaskConfig& task, Split split) {
  switch (split) {
    case Split::train: return task.train;
    case Split::dev: return task.dev;
    default: return task.test;
  }
}

int64_t split_limit(const TaskConfig& task, Split split) {
  switch (split) {
    case Split::train: return task.limit_train;
    case Split::dev: return task.limit_dev;
    default: return task.limit_test;
  }
}


void copy_file_into(const fs::path& from, const fs::path& dir, const std::string& name = "") {
  write_text_atomically(dir / (name.empty() ? from.filename().string() : name),
                        read_input_file(from, limits::kTokenizerFileBytes, "tokenizer file"));
}

// The tasks' training texts, one per line, for training a SentencePiece model.
fs::path write_task_texts(const ExperimentConfig& config, const fs::path& dir) {
  std::string text;
  for (const auto& task : config.tasks) {
    if (task.train.empty()) continue;
    const TaskSpec& spec = builtin_task(task.type.empty() ? task.name : task.type);
    const TaskSplit rows = read_task_split(spec, task.train, split_read_options(config, task, Split::train));
    for (const auto& ex : rows.examples) {
      text += ex.text_a + "\n";
      if (!ex.text_b.empty()) text += ex.text_b + "\n";
    }
  }
  const fs::path path = dir / "training_text.txt";
  write_text_atomically(path, text);
  return path;
}

}  // namespace

// Puts the experiment's tokenizer files into the run folder's tokenizer/.
void prepare_run_tokenizer(const ModelSection& model, const fs::path& dir, uint64_t seed, const std::string& where,
                           const std::function<fs::path()>& task_texts) {
  const TokenizerConfig& t = model.tokenizer;
  if (!model.pretrained.empty()) check_model_folder(model.pretrained);
  check_tokenizer_matches_pretrained(model, where);
  check_config_keeps_pretrained_shape(model, where);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (t.kind == TokenizerKind::automatic) {  // with model.pretrained: the config's loader checks it
    const fs::path from = model.pretrained;
    bool found = false;
    for (const char* name : {"vocab.txt", "spm.model", "tokenizer_config.json"}) {
      if (!fs::exists(from / name)) continue;
      copy_file_into(from / name, dir);
      found = found || std::string(name) != "tokenizer_config.json";
    }
    if (!found) throw UserError(fmt::format("{} has no vocab.txt or spm.model", from.string()));
  } else if (t.kind == TokenizerKind::wordpiece) {
    copy_file_into(t.vocab, dir, "vocab.txt");
    write_text_atomically(dir / "tokenizer_config.json",
                          json_text(nlohmann::json{{"do_lower_case", t.lower_case}}) + "\n");
  } else if (!t.model.empty() && fs::exists(t.model)) {
    copy_file_into(t.model, dir, "spm.model");
  } else {
    std::vector<fs::path> inputs;
    for (const auto& source : t.train_from) {
      if (source == "tasks") inputs.push_back(task_texts());
      else inputs.emplace_back(source);
    }
    if (inputs.empty())
      throw UserError(fmt::format("{}: model.tokenizer: a sentencepiece tokenizer needs an existing model or "
                                  "train_from (files, or \"tasks\" for the tasks' training texts)",
                                  where));
    SentencePieceTrainingOptions options;
    options.seed = static_cast<uint32_t>(seed);
    // A small corpus (the quickstart's) cannot fill a vocabulary sized for
    // the real data sets: vocab_size is a ceiling.
    options.hard_vocab_limit = false;
    train_sentencepiece(inputs, dir / "spm.model", t.vocab_size, options);
    spdlog::info("trained a SentencePiece vocabulary of {} pieces (at most {})",
                 load_tokenizer(dir)->vocab_size(), t.vocab_size);
    if (!t.model.empty()) {
      // Keep a copy where the config says, so that later runs reuse it.
      fs::create_directories(fs::path(t.model).parent_path(), ec);
      copy_file_into(dir / "spm.model", fs::path(t.model).parent_path(), fs::path(t.model).filename().string());
    }
  }
}

nlohmann::json encoder_config_json(const ModelSection& model, const Tokenizer& tokenizer) {
  nlohmann::json json;
  if (!model.pretrained.empty()) {
    json = read_json_file(fs::path(model.pretrained) / "config.json");
  } else {
    json = model_config_to_json(ModelConfig{});
    json["vocab_size"] = tokenizer.vocab_size();
    json["pad_token_id"] = tokenizer.special_ids().pad;
  }
  json.merge_patch(model.config);
  return json;
}

namespace {

void prepare_tokenizer(const ExperimentConfig& config, const RunDirectory& run) {
  prepare_run_tokenizer(config.model, run.tokenizer_dir(), config.seed, config.source.string(),
                        [&] { return write_task_texts(config, run.tokenizer_dir()); });
}

// Everything but the weights: tokenizer from the run folder, encoder config,
// heads, model on its device.
Experiment assemble_experiment(const ExperimentConfig& config, const RunDirectory& run, const ModelConfig& model_config,
                    bool with_pooler) {
  Experiment e;
  e.config = config;
  e.tokenizer = load_tokenizer(run.tokenizer_dir());
  e.model_config = model_config;
  check_tokenizer_fits(*e.tokenizer, model_config.vocab_size, run.tokenizer_dir().string());
  std::vector<HeadSpec> heads;
  for (const auto& task : config.tasks) {
    // Absolute positions are a table: longer inputs would index past its end.
    if (model_config.has_position_embeddings() && task.max_length > model_config.max_position_embeddings)
      throw UserError(fmt::format("{}: tasks.{}.max_length is {} but the model has only {} positions "
                                  "(max_position_embeddings); lower max_length",
                                  config.source.string(), task.name, task.max_length,
                                  model_config.max_position_embeddings));
    TaskRuntime t;
    t.config = task;
    t.spec = builtin_task(task.type.empty() ? task.name : task.type);
    t.spec.name = task.name;
    t.head = head_spec(task, t.spec);
    heads.push_back(t.head);
    e.tasks.push_back(std::move(t));
  }
  // Same seed, same initial weights: heads (and a random encoder) are drawn
  // from LibTorch's generator right here.
  torch::manual_seed(config.seed);
  BertModel encoder(model_config, BertModelOptions{with_pooler});
  encoder->initialize_weights();
  e.model = MultitaskModel(encoder, heads, config.model.pals);
  if (config.model.freeze_encoder) {
    e.model->freeze_encoder();
    // A pooler added to a checkpoint without one is new, like the heads.
    if (config.model.add_pooler)
      for (auto& p : e.model->bert->pooler->parameters()) p.requires_grad_(true);
  }
  e.device = resolve_device(config.device);
  if (config.precision == Precision::bf16) {
    const std::string emulated = bf16_emulation_warning(e.device);
    if (!emulated.empty()) spdlog::warn("{}", emulated);
  }
  e.model->to(e.device);
  return e;
}

}  // namespace

ReadOptions split_read_options(const ExperimentConfig& config, const TaskConfig& task, Split split) {
  ReadOptions options;
  options.on_bad_row = config.train.on_bad_row;
  options.limit = split_limit(task, split);
  options.random_subset = task.subset == Subset::random;
  options.subset_seed = config.seed * 31 + static_cast<uint64_t>(split);
  if (split == Split::train) options.fraction = task.train_fraction;
  // Test files are unlabeled in the CS224N data; train and dev must be labeled.
  options.require_labels = split != Split::test;
  return options;
}

HeadSpec head_spec(const TaskConfig& task, const TaskSpec& spec) {
  HeadSpec h;
  h.task = task.name;
  h.target = spec.target;
  h.num_classes = spec.target == TaskTarget::classes ? spec.num_classes : 0;
  h.pair_mode = spec.input == TaskInput::pair ? task.pair_mode : PairMode::none;
  h.combine = task.combine;
  h.cosine_map = task.cosine_map;
  h.sentence_projection = task.sentence_projection;
  h.pooling = task.pooling;
  h.dropout = task.dropout;
  h.regression_max = spec.label_max;
  return h;
}

namespace {

// The model of a new run, its tokenizer files already in the run folder.
Experiment build_new_experiment(const ExperimentConfig& config, const RunDirectory& run, const nlohmann::json& json) {
  const ModelConfig model_config = model_config_from_json(json, config.source.string() + ": model.config");
  if (config.model.pretrained.empty()) return assemble_experiment(config, run, model_config, /*with_pooler=*/true);
  // model.config may change the architecture (disentangled attention on
  // bert-base-uncased): load_pretrained checks the checkpoint against its own
  // config, then initializes what the overrides add, from this seed.
  torch::manual_seed(config.seed);
  const PretrainedModel pretrained = load_pretrained(config.model.pretrained, config.model.config);
  const bool checkpoint_pooler = static_cast<bool>(pretrained.model->pooler);
  if (checkpoint_pooler && config.model.add_pooler)
    throw UserError(fmt::format("{}: model.add_pooler: {} has a pooler already; remove add_pooler",
                                config.source.string(), config.model.pretrained));
  Experiment e = assemble_experiment(config, run, pretrained.config, checkpoint_pooler || config.model.add_pooler);
  NamedTensors state = module_state(*pretrained.model);
  if (config.model.add_pooler) {
    // The fresh pooler keeps the initialization assemble_experiment() drew for it.
    for (const auto& [name, tensor] : module_state(*e.model->bert->pooler)) state.emplace("pooler." + name, tensor);
    spdlog::info("{} has no pooler: a fresh one (normal, std {}) trains with the heads", config.model.pretrained,
                 pretrained.config.initializer_range);
  }
  load_module_state(*e.model->bert, state, (fs::path(config.model.pretrained) / "model.safetensors").string());
  return e;
}

}  // namespace

Experiment start_experiment(const ExperimentConfig& config, const RunDirectory& run) {
  write_text_atomically(run.resolved_config(), resolved_yaml(config));
  prepare_tokenizer(config, run);
  auto tokenizer = load_tokenizer(run.tokenizer_dir());
  const nlohmann::json json = encoder_config_json(config.model, *tokenizer);
  write_text_atomically(run.model_config(), json_text(json, 2) + "\n");
  Experiment e = build_new_experiment(config, run, json);
  e.working_directory = fs::current_path();
  return e;
}

Experiment join_experiment(const ExperimentConfig& config, const RunDirectory& run) {
  if (!fs::exists(run.model_config()))
    throw UserError(fmt::format("{}: rank 0 has not written model_config.json", run.root().string()));
  Experiment e = build_new_experiment(config, run, read_json_file(run.model_config()));
  e.working_directory = fs::current_path();
  return e;
}

Experiment reopen_experiment(const ExperimentConfig& config, const RunDirectory& run) {
  if (!fs::exists(run.model_config()))
    throw UserError(fmt::format("{} is not a run folder (no model_config.json)", run.root().string()));
  const nlohmann::json json = read_json_file(run.model_config());
  const ModelConfig model_config = model_config_from_json(json, run.model_config().string());
  // Whether the encoder has a pooler is recorded by the checkpoint itself.
  const fs::path checkpoint = run.checkpoint_to_read(run.has_checkpoint("last") ? "last" : "best");
  const auto names = read_safetensors(checkpoint / "model.safetensors").tensors;
  return assemble_experiment(config, run, model_config, names.count("bert.pooler.dense.weight") > 0);
}

void load_split(Experiment& e, Split split) {
  for (auto& task : e.tasks) {
    const std::string& configured = split_path(task.config, split);
    if (configured.empty()) continue;
    const std::string path = path_from_run_start(configured, e.working_directory);
    TaskSplit rows = read_task_split(task.spec, path, split_read_options(e.config, task.config, split));
    if (rows.skipped_rows > 0)
      spdlog::warn("{}: skipped {} malformed row(s) (on_bad_row: skip)", path, rows.skipped_rows);
    // An empty dev split would score 0 over no examples, weigh in the overall
    // score and pick the best checkpoint.
    if (rows.examples.empty())
      throw UserError(fmt::format("{}: no data rows{} for task {}'s {} split; give a file with rows, or leave "
                                  "tasks.{}.{} out",
                                  path, rows.skipped_rows > 0 ? fmt::format(" (all {} skipped)", rows.skipped_rows) : "",
                                  task.config.name, split_name(split), task.config.name, split_name(split)));
    task.encoded[split] = encode_split(rows, task.spec, *e.tokenizer, task.head.pair_mode, task.config.max_length);
    task.rows[split] = std::move(rows);
  }
}

void override_split_path(Experiment& e, const std::string& task, Split split, const std::string& path) {
  const std::string absolute = fs::absolute(path).string();
  auto set = [&](TaskConfig& t) {
    (split == Split::train ? t.train : split == Split::dev ? t.dev : t.test) = absolute;
  };
  set(e.task(task).config);  // UserError for an unknown task
  for (auto& t : e.config.tasks)
    if (t.name == task) set(t);
}

OpenedRun open_run(const fs::path& folder, const std::string& checkpoint) {
  RunDirectory run(folder);
  if (!fs::exists(run.resolved_config()))
    throw UserError(fmt::format("{} is not a run folder (no config.resolved.yaml)", folder.string()));
  if (run.is_pretraining())
    throw UserError(fmt::format("{} is a pretraining run, not a fine-tuning one; its encoder is the model folder {} "
                                "(for fill-mask, encode, attention --model, or model.pretrained)",
                                folder.string(), (folder / "model").string()));
  if (!checkpoint.empty() && !run.has_checkpoint(checkpoint))
    throw UserError(fmt::format("{} has no checkpoint \"{}\" (best or last)", folder.string(), checkpoint));
  Experiment experiment = reopen_experiment(load_experiment(run.resolved_config()), run);
  if (fs::path started_in = run.started_in(); !started_in.empty()) experiment.working_directory = std::move(started_in);
  if (!checkpoint.empty()) load_checkpoint_weights(run, checkpoint, experiment.model);
  return {std::move(run), std::move(experiment)};
}

nlohmann::json parameter_counts(const Experiment& e) {
  auto count = [](const std::vector<torch::Tensor>& params, bool trainable_only) {
    int64_t n = 0;
    for (const auto& p : params)
      if (!trainable_only || p.requires_grad()) n += p.numel();
    return n;
  };
  const auto all = e.model->parameters();
  nlohmann::json per_task = nlohmann::json::object();
  for (const auto& t : e.tasks) per_task[t.name()] = count(e.model->task_parameters(t.name()), false);
  return {
      {"total", count(all, false)},
      {"trainable", count(all, true)},
      {"shared", count(e.model->shared_parameters(), false)},
      {"per_task", per_task},
  };
}

}  // namespace mtbert
