#include "train/data_parallel.h"

#include <mutex>

#include <ATen/core/Generator.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "core/user_error.h"
#include "dist/communicator.h"

namespace mtbert {

void start_ranks_alike(Communicator& comm, torch::nn::Module& model, uint64_t seed) {
  {
    torch::NoGradGuard no_grad;
    for (auto& tensor : model.parameters()) {
      auto data = tensor.detach();
      comm.broadcast(data);
    }
    for (auto& tensor : model.buffers()) comm.broadcast(tensor);
  }
  if (comm.rank() > 0) torch::manual_seed(seed + 1000003ULL * static_cast<uint64_t>(comm.rank()));
}

std::vector<torch::Tensor> gather_rank_generators(Communicator& comm) {
  auto generator = at::detail::getDefaultCPUGenerator();
  torch::Tensor state;
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    state = generator.get_state();
  }
  auto states = comm.all_gather(state.to(comm.device()));
  for (auto& s : states) s = s.cpu();  // NCCL gathers on the GPU; checkpoints are written from host memory
  return states;
}

void check_resumed_ranks(const RunDirectory& run, int64_t saved, int64_t current) {
  if (saved != current)
    throw UserError(fmt::format("{} was trained with {} rank(s): resume it with as many (this is {}), since each "
                                "batch was planned for them",
                                run.root().string(), saved, current));
}

}  // namespace mtbert
