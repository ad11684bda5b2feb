#include "train/step_graphs.h"

#include <fmt/format.h>

#include "core/autocast_scope.h"
#include "core/internal_error.h"
#include "core/token_batch.h"

namespace mtbert {

std::string graph_shape_key(const TokenBatch& tokens) {
  return fmt::format("{}x{}{}{}", tokens.input_ids.size(0), tokens.input_ids.size(1), tokens.padded ? " padded" : "",
                     tokens.token_type_ids.defined() ? "" : " no-types");
}

}  // namespace mtbert

#ifdef MTBERT_WITH_CUDA

#include <map>
#include <stdexcept>
#include <utility>

#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/core/InferenceMode.h>

namespace mtbert {

namespace {

class CudaStepGraphs final : public StepGraphs {
 public:
  CudaStepGraphs(c10::Device device, std::string what)
      : device_(device),
        what_(std::move(what)),
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index())),
        pool_(at::cuda::graph_pool_handle()) {}

  Run run(const std::string& key, const std::function<void()>& work) override {
    check_invariant(!weight_casts_kept(), "{} ran under a WeightCastCache: its graph would read the casts kept there",
                    what_);
    const c10::cuda::CUDAGuard device_guard(device_);
    const auto caller = c10::cuda::getCurrentCUDAStream(device_.index());
    follow(caller, stream_);
    // The caller's stream waits for the side stream's work when this returns
    // or throws: whatever runs next (evaluation, a checkpoint) reads what it
    // wrote.
    const Rejoin rejoin{stream_, caller};
    const auto with_own_casts = [&] {
      const WeightCastCache own_casts;
      work();
    };
    Run how = Run::replayed;
    {
      const c10::cuda::CUDAStreamGuard on_side_stream(stream_);
      Entry& entry = entries_[key];
      if (entry.graph) {
        entry.graph->replay();
      } else if (entry.eager_runs < kStepGraphWarmups) {
        with_own_casts();
        ++entry.eager_runs;
        how = Run::eager;
      } else {
        entry.graph = capture(key, with_own_casts);
        entry.graph->replay();
        ++captured_;
        how = Run::captured;
      }
    }
    return how;
  }

  size_t graphs() const override { return captured_; }

 private:
  struct Entry {
    int eager_runs = 0;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
  };

  // `later` runs what is queued on it from now on after what `earlier` holds.
  static void follow(const c10::cuda::CUDAStream& earlier, const c10::cuda::CUDAStream& later) {
    if (earlier == later) return;
    at::cuda::CUDAEvent event;
    event.record(earlier);
    event.block(later);
  }

  struct Rejoin {
    c10::cuda::CUDAStream from, to;
    ~Rejoin() {
      try {
        follow(from, to);
      } catch (const std::exception&) {
        // The device's own error, which its next operation reports (or the
        // exception already on its way).
      }
    }
  };

  std::unique_ptr<at::cuda::CUDAGraph> capture(const std::string& key, const std::function<void()>& work) {
    // As torch.cuda.graph does: nothing of the device's earlier work still
    // running while the capture begins (once per key).
    c10::cuda::device_synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    {
      // The first capture makes the CUDA generator's graph-safe seed and
      // offset tensors; made under an evaluation's InferenceMode they would
      // be inference tensors, which every later capture or replay outside it
      // refuses to update (LibTorch before pytorch/pytorch#172706).
      const c10::InferenceMode not_inference(/*enabled=*/false);
      graph->capture_begin(pool_);
    }
    try {
      work();
    } catch (const std::exception& e) {
      // The stream must leave capture mode whatever broke it (the run ends
      // here: an invalidated capture's capture_end throws before it hands
      // the allocator back its pool); the capture's own complaint, if any,
      // says less than the first error.
      try {
        graph->capture_end();
      } catch (const std::exception&) {
      }
      throw std::runtime_error(fmt::format("capturing {} ({}) in a CUDA graph failed: {} "
                                           "(train.cuda_graphs: false runs it without graphs)",
                                           what_, key, e.what()));
    }
    graph->capture_end();
    return graph;
  }

  c10::Device device_;
  std::string what_;
  c10::cuda::CUDAStream stream_;
  decltype(at::cuda::graph_pool_handle()) pool_;  // shared by every graph
  std::map<std::string, Entry> entries_;
  size_t captured_ = 0;
};

}  // namespace

std::unique_ptr<StepGraphs> make_step_graphs(c10::Device device, std::string what) {
  check_invariant(device.is_cuda(), "make_step_graphs: {} is not a CUDA device", device.str());
  return std::make_unique<CudaStepGraphs>(device, std::move(what));
}

}  // namespace mtbert

#else

namespace mtbert {

// Without CUDA no device is a GPU (core/device checks refuse device: cuda
// first), so nothing asks for graphs.
std::unique_ptr<StepGraphs> make_step_graphs(c10::Device device, std::string /*what*/) {
  check_invariant(false, "make_step_graphs: this mtbert is built without CUDA ({} asked for)", device.str());
  return nullptr;
}

}  // namespace mtbert

#endif
