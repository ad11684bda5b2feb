#include "dist/communicator.h"

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "support/catch.h"
#include "support/serial_assertions.h"
#include <torch/torch.h>

#include "dist/local_launcher.h"

using mtbert::Communicator;
using mtbert::CommunicatorOptions;
using mtbert::DistributedError;
using mtbert::LaunchEnv;

namespace {

LaunchEnv rank_env(int rank, int world, int port) {
  LaunchEnv env;
  env.launcher = "torchrun";
  env.rank = rank;
  env.world_size = world;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  return env;
}

// Runs `body` as every rank of a Gloo group over loopback, one thread each.
void run_ranks(int world, const std::function<void(Communicator&)>& body, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const int port = mtbert::free_local_port();
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [=, &body] {
      CommunicatorOptions options;
      options.timeout = timeout;
      Communicator comm(rank_env(r, world, port), options);
      body(comm);
    }));
  for (auto& rank : ranks) rank.get();
}

}  // namespace

TEST_CASE("collectives of two ranks over Gloo", "[dist]") {
  run_ranks(2, [](Communicator& comm) {
    const double r = comm.rank();
    auto sum = torch::tensor({1.0 + r, 10.0 * r}, torch::kDouble);
    comm.all_reduce_sum(sum);
    MTBERT_SERIAL(CHECK(sum[0].item<double>() == 3.0));
    MTBERT_SERIAL(CHECK(sum[1].item<double>() == 10.0));

    auto max = torch::tensor({r, -r}, torch::kFloat);
    comm.all_reduce_max(max);
    MTBERT_SERIAL(CHECK(max[0].item<float>() == 1.0f));
    MTBERT_SERIAL(CHECK(max[1].item<float>() == 0.0f));

    auto from_one = torch::full({3}, r);
    comm.broadcast(from_one, 1);
    MTBERT_SERIAL(CHECK(torch::equal(from_one, torch::full({3}, 1.0))));

    const auto gathered = comm.all_gather(torch::full({2}, static_cast<int64_t>(comm.rank()), torch::kLong));
    MTBERT_SERIAL(REQUIRE(gathered.size() == 2));
    MTBERT_SERIAL(CHECK(gathered[0][1].item<int64_t>() == 0));
    MTBERT_SERIAL(CHECK(gathered[1][0].item<int64_t>() == 1));

    comm.barrier();
    // Collectives run outside the lock: a rank waiting in one while holding it
    // would keep the other from joining.
    const bool one_said_yes = comm.any(comm.rank() == 1);
    const bool none_said_yes = !comm.any(false);
    MTBERT_SERIAL(CHECK(one_said_yes));
    MTBERT_SERIAL(CHECK(none_said_yes));
  });
}

TEST_CASE("a rank that leaves makes the other's next collective fail with one line naming it", "[dist]") {
  std::string message;
  run_ranks(2, [&](Communicator& comm) {
    comm.barrier();
    if (comm.rank() == 1) return;  // its process group goes away with it
    auto t = torch::ones({4});
    try {
      for (int i = 0; i < 100; ++i) comm.all_reduce_sum(t);
    } catch (const DistributedError& e) {
      message = e.what();
    }
  }, std::chrono::seconds(10));
  MTBERT_SERIAL(CHECK_THAT(message, Catch::Matchers::StartsWith("rank 0 of 2: all_reduce failed: another rank exited or did not answer within 10 s")));
  MTBERT_SERIAL(CHECK(message.find('\n') == std::string::npos));
}

TEST_CASE("a rank that never joins: the others give up at the timeout", "[dist]") {
  const int port = mtbert::free_local_port();
  CommunicatorOptions options;
  options.timeout = std::chrono::seconds(2);
  const auto start = std::chrono::steady_clock::now();
  try {
    Communicator comm(rank_env(0, 2, port), options);
    FAIL("rank 0 joined a group whose rank 1 never came");
  } catch (const DistributedError& e) {
    MTBERT_SERIAL(CHECK_THAT(e.what(), Catch::Matchers::StartsWith("rank 0 of 2: ")));
  }
  MTBERT_SERIAL(CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30)));
}
