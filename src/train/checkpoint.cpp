#include "train/checkpoint.h"

#include <sstream>

#include <ATen/core/Generator.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/runtime.h"
#include "core/safetensors.h"
#include "core/user_error.h"
#include "models/module_state.h"

namespace mtbert {

namespace fs = std::filesystem;

namespace {

// LibTorch's default generators: the CPU one, and one per CUDA device.
std::vector<std::pair<std::string, at::Generator>> torch_generators() {
  std::vector<std::pair<std::string, at::Generator>> gens{{"cpu", at::detail::getDefaultCPUGenerator()}};
  for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
    gens.emplace_back(fmt::format("cuda{}", i), at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, i)));
  return gens;
}

std::string rank_generator_name(size_t rank) { return fmt::format("cpu.rank{}", rank); }

void save_rng(const fs::path& file, const std::mt19937_64& host_rng, const std::vector<torch::Tensor>* ranks) {
  NamedTensors states;
  for (auto& [name, gen] : torch_generators()) {
    std::lock_guard<std::mutex> lock(gen.mutex());
    states[name] = gen.get_state();
  }
  // Rank 0's is "cpu" above.
  if (ranks)
    for (size_t r = 1; r < ranks->size(); ++r) states[rank_generator_name(r)] = (*ranks)[r];
  std::ostringstream host;
  host << host_rng;
  write_safetensors(file, states, {{"host", host.str()}});
}

void load_rng(const fs::path& file, std::mt19937_64& host_rng, int rank) {
  SafetensorsFile saved = read_safetensors(file);
  if (rank > 0) {
    auto it = saved.tensors.find(rank_generator_name(static_cast<size_t>(rank)));
    if (it == saved.tensors.end())
      throw UserError(fmt::format("{}: no generator state for rank {} (the run was trained with fewer ranks)",
                                  file.string(), rank));
    saved.tensors["cpu"] = it->second;
  }
  for (auto& [name, gen] : torch_generators()) {
    auto it = saved.tensors.find(name);
    // A checkpoint from a CPU run resumed on a GPU: CUDA streams start fresh.
    if (it == saved.tensors.end()) continue;
    std::lock_guard<std::mutex> lock(gen.mutex());
    const at::Tensor expected = gen.get_state();
    if (it->second.scalar_type() != expected.scalar_type() || it->second.numel() != expected.numel())
      throw UserError(fmt::format("{}: generator state \"{}\" is {} {} values, expected {} {}; the checkpoint is "
                                  "damaged",
                                  file.string(), name, it->second.numel(), c10::toString(it->second.scalar_type()),
                                  expected.numel(), c10::toString(expected.scalar_type())));
    try {
      gen.set_state(it->second);
    } catch (const c10::Error& e) {
      throw UserError(fmt::format("{}: generator state \"{}\" cannot be restored ({}); the checkpoint is damaged",
                                  file.string(), name, first_line(e.what_without_backtrace())));
    }
  }
  std::istringstream host(saved.metadata["host"]);
  host >> host_rng;
  if (!host) throw UserError(fmt::format("{}: corrupt host generator state", file.string()));
}

}  // namespace

void save_checkpoint(const RunDirectory& run, const std::string& name, const TrainingStateRefs& state) {
  run.replace_checkpoint(name, [&](const fs::path& dir) {
    write_safetensors(dir / "model.safetensors", module_state(*state.model), {{"format", "pt"}});
    // The config this checkpoint was trained with: --resume compares it with
    // the run's config.resolved.yaml, which a user may have edited since.
    std::error_code ec;
    if (fs::is_regular_file(run.resolved_config(), ec))
      write_text_atomically(dir / "config.resolved.yaml",
                            read_input_file(run.resolved_config(), limits::kConfigFileBytes, "config file"));
    if (state.progress) write_text_atomically(dir / "state.json", json_text(to_json(*state.progress), 2) + "\n");
    if (state.optimizer) {
      torch::serialize::OutputArchive archive;
      state.optimizer->save(archive);
      // Through a FileWriter, whose write() never reports a short write: when
      // LibTorch's archive writer sees one, its destructor throws
      // (std::terminate); finish() reports the disk's error instead.
      write_file_atomically(dir / "optimizer.pt", [&](FileWriter& out) {
        archive.save_to([&](const void* data, size_t size) { return out.write(data, size); });
      });
    }
    if (state.host_rng) save_rng(dir / "rng.safetensors", *state.host_rng, state.rank_generators);
    if (state.teacher) write_safetensors(dir / "teacher.safetensors", module_state(*state.teacher));
  });
}

void load_checkpoint(const RunDirectory& run, const std::string& name, const TrainingStateRefs& state) {
  const fs::path dir = run.checkpoint_to_read(name);
  auto require = [&](const char* file) {
    if (!fs::exists(dir / file)) throw UserError(fmt::format("{} is incomplete: {} is missing", dir.string(), file));
    return dir / file;
  };
  const fs::path weights = require("model.safetensors");
  load_module_state(*state.model, read_safetensors(weights).tensors, weights.string());
  if (state.progress) {
    const fs::path file = require("state.json");
    *state.progress = train_progress_from_json(read_json_file(file), file.string());
  }
  if (state.optimizer) {
    const fs::path file = require("optimizer.pt");
    torch::serialize::InputArchive archive;
    try {
      // Onto the model's device: a run checkpointed on a GPU resumes on a CPU
      // and the other way round.
      const auto parameters = state.model->parameters();
      archive.load_from(file.string(), parameters.empty() ? torch::Device(torch::kCPU) : parameters[0].device());
      state.optimizer->load(archive);
    } catch (const c10::Error& e) {
      throw UserError(fmt::format("{}: cannot restore the optimizer: {}", file.string(),
                                  first_line(e.what_without_backtrace())));
    }
  }
  if (state.host_rng) load_rng(require("rng.safetensors"), *state.host_rng, state.rank);
  if (state.teacher) {
    const fs::path file = require("teacher.safetensors");
    load_module_state(*state.teacher, read_safetensors(file).tensors, file.string());
  }
}

void load_checkpoint_weights(const RunDirectory& run, const std::string& name, MultitaskModel& model) {
  load_checkpoint(run, name, TrainingStateRefs{model.ptr()});
}

}  // namespace mtbert
