#include "dist/gradient_reducer.h"

#include <functional>
#include <future>
#include <vector>

#include "support/catch.h"
#include "support/serial_assertions.h"
#include <torch/torch.h>

#include "dist/communicator.h"
#include "dist/local_launcher.h"

using mtbert::Communicator;
using mtbert::GradientReducer;

namespace {

void run_ranks(int world, const std::function<void(Communicator&)>& body) {
  const int port = mtbert::free_local_port();
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [=, &body] {
      mtbert::LaunchEnv env;
      env.rank = r;
      env.world_size = world;
      env.master_addr = "127.0.0.1";
      env.master_port = port;
      Communicator comm(env, mtbert::CommunicatorOptions{});
      body(comm);
    }));
  for (auto& rank : ranks) rank.get();
}

// Parameters of 10, 6 and 4 floats (40, 24 and 16 bytes); rank r's gradient
// of parameter k is (r + 1) * (k + 1), except the last, which rank 1 leaves
// without a gradient.
std::vector<torch::Tensor> parameters_of_rank(int rank) {
  std::vector<torch::Tensor> params;
  for (int64_t n : {10, 6, 4}) params.push_back(torch::zeros({n}, torch::requires_grad()));
  for (size_t k = 0; k < params.size(); ++k) {
    if (rank == 1 && k == 2) continue;
    params[k].mutable_grad() = torch::full({params[k].numel()}, (rank + 1.0) * (k + 1.0));
  }
  return params;
}

}  // namespace

TEST_CASE("gradients are averaged over ranks in flat buckets, a gradient missing on one rank counting as zeros", "[dist]") {
  run_ranks(2, [](Communicator& comm) {
    auto params = parameters_of_rank(comm.rank());
    // 64 bytes: the first two parameters (40 + 24) fill a bucket, the third starts one.
    GradientReducer reducer(comm, params, 64);
    reducer.average_gradients();
    MTBERT_SERIAL(CHECK(reducer.calls() == 3));         // the mask of gradients, then two buckets
    MTBERT_SERIAL(CHECK(reducer.bytes() == 12 + 80));  // 3 int32 flags, 20 floats
    MTBERT_SERIAL(CHECK(torch::allclose(params[0].grad(), torch::full({10}, 1.5))));  // (1 + 2) / 2
    MTBERT_SERIAL(CHECK(torch::allclose(params[1].grad(), torch::full({6}, 3.0))));   // (2 + 4) / 2
    MTBERT_SERIAL(CHECK(torch::allclose(params[2].grad(), torch::full({4}, 1.5))));   // (3 + 0) / 2
    reducer.reset_counts();
    MTBERT_SERIAL(CHECK(reducer.calls() == 0));
  });
}

TEST_CASE("a flat gradient is averaged in chunks of the bucket size", "[dist]") {
  run_ranks(2, [](Communicator& comm) {
    GradientReducer reducer(comm, {}, 16);  // 4 floats a call
    auto flat = torch::arange(10, torch::kFloat) * (comm.rank() + 1);
    reducer.average_flat(flat);
    MTBERT_SERIAL(CHECK(reducer.calls() == 3));
    MTBERT_SERIAL(CHECK(reducer.bytes() == 40));
    MTBERT_SERIAL(CHECK(torch::allclose(flat, torch::arange(10, torch::kFloat) * 1.5)));
  });
}

TEST_CASE("one parameter larger than a bucket gets a bucket of its own", "[dist]") {
  run_ranks(2, [](Communicator& comm) {
    std::vector<torch::Tensor> params{torch::zeros({2}, torch::requires_grad()), torch::zeros({100}, torch::requires_grad()),
                                      torch::zeros({2}, torch::requires_grad())};
    for (auto& p : params) p.mutable_grad() = torch::ones_like(p) * comm.rank();
    GradientReducer reducer(comm, params, 16);
    reducer.average_gradients();
    MTBERT_SERIAL(CHECK(reducer.calls() == 1 + 3));
    for (auto& p : params) MTBERT_SERIAL(CHECK(torch::allclose(p.grad(), torch::full_like(p, 0.5))));
  });
}

TEST_CASE("a parameter no rank has a gradient for keeps none (AdamW leaves it alone)", "[dist]") {
  run_ranks(2, [](Communicator& comm) {
    std::vector<torch::Tensor> params{torch::zeros({3}, torch::requires_grad()), torch::zeros({3}, torch::requires_grad())};
    params[1].mutable_grad() = torch::full({3}, 2.0 * comm.rank());
    GradientReducer reducer(comm, params, 1 << 20);
    reducer.average_gradients();
    MTBERT_SERIAL(CHECK_FALSE(params[0].grad().defined()));
    MTBERT_SERIAL(CHECK(torch::allclose(params[1].grad(), torch::full({3}, 1.0))));
    MTBERT_SERIAL(CHECK(reducer.calls() == 2));
  });
}
