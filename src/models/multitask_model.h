#pragma once
// One shared encoder and a head per task. Which parameters are shared (the
// encoder) and which belong to one task (its head, and later its adapters) is
// explicit, for PCGrad and for freezing the encoder.
#include <map>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/moduledict.h>

#include "models/bert_model.h"
#include "models/encoder_inputs.h"
#include "models/task_head.h"

namespace mtbert {

class MultitaskModelImpl : public torch::nn::Module {
 public:
  // Registered as "bert" (the encoder) and "heads.<task>".
  MultitaskModelImpl(BertModel encoder, const std::vector<HeadSpec>& heads);

  // segments: the one or two inputs of a batch (two for siamese pairs).
  // Returns the head's raw outputs (see task_head.h).
  torch::Tensor forward(const std::string& task, const std::vector<EncoderInputs>& segments);

  // forward() in two halves, for SMART and SiFT: the embedding output of each
  // segment, then everything after it. forward_embedded(embed(x)) == forward(x).
  std::vector<torch::Tensor> embed(const std::string& task, const std::vector<EncoderInputs>& segments);
  torch::Tensor forward_embedded(const std::string& task, const std::vector<torch::Tensor>& embedded,
                                 const std::vector<EncoderInputs>& segments);

  TaskHead head(const std::string& task) const;
  std::vector<std::string> tasks() const;

  // The encoder's parameters, shared by all tasks.
  std::vector<torch::Tensor> shared_parameters() const;
  // The parameters only `task` uses (its head).
  std::vector<torch::Tensor> task_parameters(const std::string& task) const;

  // "Pretrain" mode of the reports: the encoder's parameters stop requiring
  // gradients; only heads (and adapters) train.
  void freeze_encoder();

  BertModel bert{nullptr};
  torch::nn::ModuleDict heads{nullptr};
};
TORCH_MODULE(MultitaskModel);

}  // namespace mtbert
