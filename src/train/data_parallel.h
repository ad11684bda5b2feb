#pragma once
// What training and pretraining do alike as one rank of a data-parallel job
// (train/trainer.h, train/pretrainer.h): start every rank from the same
// weights, keep each rank's own generator in the checkpoints, resume only
// with the ranks the batches were planned for.
#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "train/run_directory.h"

namespace mtbert {

class Communicator;

// Every rank takes rank 0's parameters and buffers (they agree already when
// built from the same seed; this makes it so whatever built them). Then the
// ranks' default generators part: dropout (and SMART's noise) differ between
// ranks, and rank 0 draws what a single process would.
void start_ranks_alike(Communicator& comm, torch::nn::Module& model, uint64_t seed);

// Every rank's CPU generator state in rank order (every rank must call it;
// checkpoints save them all, see TrainingStateRefs::rank_generators).
std::vector<torch::Tensor> gather_rank_generators(Communicator& comm);

// UserError unless a run trained with `saved` ranks resumes with as many.
void check_resumed_ranks(const RunDirectory& run, int64_t saved, int64_t current);

}  // namespace mtbert
