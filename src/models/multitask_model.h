#pragma once
// One shared encoder and a head per task. Which parameters are shared (the
// encoder) and which belong to one task (its head, and later its adapters) is
// explicit, for PCGrad and for freezing the encoder.
#include <map>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>

#include "core/joined_batch.h"
#include "models/bert_model.h"
#include "models/encoder_inputs.h"
#include "models/pal_config.h"
#include "models/task_head.h"

namespace mtbert {

class MultitaskModel;

class MultitaskModelImpl : public torch::nn::Module {
 public:
  // Registered as "bert" (the encoder), "heads.<task>" and, with PALs,
  // "pals.<task>" (parallel_pals.h or top_pal.h: each task's forward goes
  // through its own). Every head spec is validated (validate_head_spec); task
  // names must be distinct. UserError otherwise.
  MultitaskModelImpl(BertModel encoder, const std::vector<HeadSpec>& heads, const PalConfig& pals = {});

  // segments: the one or two inputs of a batch (two for siamese pairs).
  // Returns the head's raw outputs (see task_head.h).
  torch::Tensor forward(const std::string& task, const std::vector<TokenBatch>& segments);

  // One encoder pass over the batches of several tasks (joined.tokens on the
  // model's device): each part's rows through its task's PALs, pooling and
  // head. Returns each part's raw outputs, in the order of joined.parts; equal
  // to forward(part.task, its segments) to rounding (padding is masked, but
  // sums over keys and tokens may add in another order).
  std::vector<torch::Tensor> forward_joined(const JoinedBatch& joined);

  // forward() in two halves, for SMART and SiFT: the embedding output of each
  // segment, then everything after it. forward_embedded(embed(x)) == forward(x).
  std::vector<torch::Tensor> embed(const std::string& task, const std::vector<TokenBatch>& segments);
  torch::Tensor forward_embedded(const std::string& task, const std::vector<torch::Tensor>& embedded,
                                 const std::vector<TokenBatch>& segments);

  // One step earlier, for SiFT: each segment's embedding sum [B, N, H] (word
  // + token type + position embeddings: the input of the embedding
  // LayerNorm), then everything after it.
  // forward_from_embedding_sums(embedding_sums(x)) == forward(x).
  std::vector<torch::Tensor> embedding_sums(const std::string& task, const std::vector<TokenBatch>& segments);
  torch::Tensor forward_from_embedding_sums(const std::string& task, const std::vector<torch::Tensor>& sums,
                                            const std::vector<TokenBatch>& segments);

  // UserError naming the known tasks when `task` has no head.
  TaskHead head(const std::string& task) const;
  std::vector<std::string> tasks() const;

  // Everything that is not one task's own: the encoder (and, with adapters,
  // whatever they share across tasks).
  std::vector<torch::Tensor> shared_parameters() const;
  // The parameters only `task` uses: heads.<task>.*, and <group>.<task>.* of
  // every group registered with register_task_modules().
  std::vector<torch::Tensor> task_parameters(const std::string& task) const;

  // Registers a ModuleDict with one module per task (keyed by task name) under
  // `name`; its parameters belong to their task in task_parameters(). The
  // heads are the group "heads"; adapters (PALs) add theirs, e.g. "pals".
  torch::nn::ModuleDict register_task_modules(const std::string& name, torch::nn::ModuleDict modules);

  // "Pretrain" mode of the reports: the encoder's parameters stop requiring
  // gradients; only heads (and adapters) train.
  void freeze_encoder();

  // A new model of the same architecture (encoder config, pooler or not, head
  // specs) holding copies of this one's parameters and buffers, on the same
  // device, in the same train/eval mode and with the same requires_grad
  // flags: the SMART momentum teacher.
  MultitaskModel twin() const;

  const PalConfig& pal_config() const { return pal_config_; }

  // One segment's embedding output through the encoder, with the task's PALs
  // when there are; attention masked only where inputs.padded says so, and
  // pooler_output only when the task's head pools with the pooler.
  EncoderOutput encode_segment(const std::string& task, const torch::Tensor& embedded, const TokenBatch& inputs);

  // Consecutive rows of an encoder input that belong to one task.
  struct RowRoute {
    std::string task;
    int64_t rows = 0;
  };
  // The embedding output's rows [R, N, H] through the encoder, the rows of
  // each route (in order, covering all R) through its task's PALs when there
  // are; attention_mask [R, N], or undefined when nothing is padded.
  // pooler_output only when some route's head pools with the pooler.
  EncoderOutput encode_routed(const std::vector<RowRoute>& routes, const torch::Tensor& embedded,
                              const torch::Tensor& attention_mask);

  BertModel bert{nullptr};
  torch::nn::ModuleDict heads{nullptr};
  torch::nn::ModuleDict pals{nullptr};  // with PALs only

 private:
  // Prefixes "<group>." of the per-task module groups.
  std::vector<std::string> task_groups_;
  PalConfig pal_config_;
  void check_segments(const std::string& task, size_t count) const;
};
TORCH_MODULE(MultitaskModel);

}  // namespace mtbert
