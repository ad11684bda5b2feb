#include "dist/communicator.h"

#include <cstdlib>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(USE_C10D_GLOO) && defined(MTBERT_WITH_GLOO)
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <torch/torch.h>

#include "core/runtime.h"
#include "core/torch_compat.h"

namespace mtbert {

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<MTBERT_C10D_COLLECTIVES> group;
  std::chrono::seconds timeout;
};

namespace {

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

#if defined(USE_C10D_GLOO) && defined(MTBERT_WITH_GLOO)
// Gloo binds to one interface: the loopback one when the whole job runs on
// this machine, GLOO_SOCKET_IFNAME's when set (as in PyTorch), else the one
// this host's name resolves to.
std::shared_ptr<::gloo::transport::Device> gloo_device(const LaunchEnv& env) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (is_loopback(env.master_addr)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}
#endif

}  // namespace

Communicator::Communicator(const LaunchEnv& env, const CommunicatorOptions& options)
    : impl_(std::make_unique<Impl>()), rank_(env.rank), world_size_(env.world_size) {
  impl_->timeout = options.timeout;
  const std::string where = fmt::format("rank {} of {}", rank_, world_size_);
  try {
    c10d::TCPStoreOptions store;
    store.port = static_cast<std::uint16_t>(env.master_port);
    store.isServer = env.rank == 0 && !env.agent_store;
    store.numWorkers = static_cast<std::size_t>(env.world_size);
    store.waitWorkers = false;  // the process group's own rendezvous waits for everyone
    store.timeout = options.timeout;
    compat::use_classic_tcp_store(store);
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store);
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format("{}: cannot {} the rendezvous store at {}:{}: {}", where,
                                       env.rank == 0 && !env.agent_store ? "open" : "reach", env.master_addr, env.master_port,
                                       first_line(e.what())));
  }
  try {
    auto store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("mtbert/{}", env.restart), impl_->store);
    if (options.nccl) {
#ifdef USE_C10D_NCCL
      device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = options.timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank_, world_size_, nccl);
#else
      throw DistributedError(fmt::format("{}: distributed.backend nccl, but this LibTorch was built without NCCL "
                                         "(use gloo)", where));
#endif
    } else {
#if defined(USE_C10D_GLOO) && defined(MTBERT_WITH_GLOO)
      auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
      gloo->devices.push_back(gloo_device(env));
      impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank_, world_size_, gloo);
#else
      throw DistributedError(fmt::format("{}: this mtbert was built without Gloo (the LibTorch it was built "
                                         "against has none, or Gloo's headers were missing)", where));
#endif
    }
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format("{}: the ranks did not all join within {} s: {}", where,
                                       options.timeout.count(), first_line(e.what())));
  }
}

Communicator::~Communicator() = default;

namespace {

// Starts a collective and waits for it; a failure (a rank gone, or the
// timeout) becomes one line that says which rank noticed it and during what.
template <class Start>
void run_collective(int rank, int world, std::chrono::seconds timeout, const char* what, Start start) {
  try {
    start()->wait(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format("rank {} of {}: {} failed: another rank exited or did not answer within "
                                       "{} s ({})",
                                       rank, world, what, timeout.count(), first_line(e.what())));
  }
}

}  // namespace

void Communicator::all_reduce_sum(torch::Tensor& tensor) {
  std::vector<torch::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  run_collective(rank_, world_size_, impl_->timeout, "all_reduce",
                 [&] { return impl_->group->allreduce(tensors, options); });
}

void Communicator::all_reduce_max(torch::Tensor& tensor) {
  std::vector<torch::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  run_collective(rank_, world_size_, impl_->timeout, "all_reduce",
                 [&] { return impl_->group->allreduce(tensors, options); });
}

void Communicator::broadcast(torch::Tensor& tensor, int root) {
  std::vector<torch::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  run_collective(rank_, world_size_, impl_->timeout, "broadcast",
                 [&] { return impl_->group->broadcast(tensors, options); });
}

std::vector<torch::Tensor> Communicator::all_gather(const torch::Tensor& tensor) {
  std::vector<std::vector<torch::Tensor>> outputs(1);
  for (int r = 0; r < world_size_; ++r) outputs[0].push_back(torch::empty_like(tensor));
  std::vector<torch::Tensor> inputs{tensor.contiguous()};
  run_collective(rank_, world_size_, impl_->timeout, "all_gather",
                 [&] { return impl_->group->allgather(outputs, inputs); });
  return outputs[0];
}

void Communicator::barrier() {
  run_collective(rank_, world_size_, impl_->timeout, "barrier", [&] { return impl_->group->barrier(); });
}

bool Communicator::any(bool flag) {
  auto t = torch::full({1}, flag ? 1 : 0, torch::TensorOptions().dtype(torch::kInt).device(device_));
  all_reduce_max(t);
  return t.item<int>() != 0;
}

}  // namespace mtbert
