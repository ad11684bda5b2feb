#pragma once
// The ranks of a data-parallel job talking to each other through PyTorch's
// own c10d runtime: a TCPStore on rank 0 for the rendezvous, then a Gloo
// process group (CPU tensors) or, in CUDA builds of LibTorch, an NCCL one
// (one GPU per local rank). c10d's headers stay in communicator.cpp: they are
// heavy and this header is included by the trainer.
//
// Every collective waits at most the configured timeout. A rank that died
// (its sockets close: noticed at once) or hangs (noticed at the timeout)
// makes the collective throw DistributedError, whose message names this rank
// and says what happened, in one line.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "dist/launch_env.h"

namespace mtbert {

class DistributedError : public std::runtime_error {
 public:
  explicit DistributedError(const std::string& what) : std::runtime_error(what) {}
};

struct CommunicatorOptions {
  bool nccl = false;  // NCCL on CUDA tensors; Gloo otherwise
  std::chrono::seconds timeout{300};
};

class Communicator {
 public:
  // Joins the job `env` describes (blocks until every rank has joined, at most
  // the timeout).
  Communicator(const LaunchEnv& env, const CommunicatorOptions& options);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_main() const { return rank_ == 0; }
  // The device collectives run on: tensors given must be there.
  torch::Device device() const { return device_; }

  // In place: the element-wise sum over ranks.
  void all_reduce_sum(torch::Tensor& tensor);
  // In place: the element-wise maximum over ranks.
  void all_reduce_max(torch::Tensor& tensor);
  // In place: rank `root`'s values on every rank.
  void broadcast(torch::Tensor& tensor, int root = 0);
  // Every rank's `tensor` (same shape on all ranks), in rank order.
  std::vector<torch::Tensor> all_gather(const torch::Tensor& tensor);
  void barrier();

  // Whether any rank says true (a stop request seen by one rank stops all).
  bool any(bool flag);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int rank_ = 0;
  int world_size_ = 1;
  torch::Device device_{torch::kCPU};
};

}  // namespace mtbert
