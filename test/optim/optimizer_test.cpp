#include "optim/optimizer.h"

#include <map>
#include <set>

#include <torch/torch.h>

#include "support/test_support.h"

namespace {

using ModulePtr = std::shared_ptr<torch::nn::Module>;

ModulePtr node() { return std::make_shared<torch::nn::Module>(); }

// A stand-in for MultitaskModel with its parameter names: a BERT-like encoder
// under "bert", heads under "heads.<task>"; one head has a LayerNorm whose name
// does not say so.
ModulePtr fixture_model() {
  auto root = node();
  auto bert = root->register_module("bert", node());
  auto embeddings = bert->register_module("embeddings", node());
  embeddings->register_module("word_embeddings", torch::nn::Embedding(10, 4));
  embeddings->register_module("LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
  auto layer = bert->register_module("encoder", node())->register_module("layer", node())->register_module("0", node());
  auto output = layer->register_module("output", node());
  output->register_module("dense", torch::nn::Linear(4, 4));
  output->register_module("LayerNorm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
  bert->register_module("pooler", node())->register_module("dense", torch::nn::Linear(4, 4));
  auto heads = root->register_module("heads", node());
  heads->register_module("sst", node())->register_module("classifier", torch::nn::Linear(4, 5));
  auto sts = heads->register_module("sts", node());
  sts->register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
  sts->register_module("classifier", torch::nn::Linear(4, 1));
  return root;
}

// Parameter names of each optimizer group.
std::vector<std::set<std::string>> group_names(const torch::nn::Module& model, const torch::optim::AdamW& optimizer) {
  std::map<const void*, std::string> names;
  for (const auto& item : model.named_parameters()) names[item.value().unsafeGetTensorImpl()] = item.key();
  std::vector<std::set<std::string>> groups;
  for (const auto& group : optimizer.param_groups()) {
    groups.emplace_back();
    for (const auto& p : group.params()) groups.back().insert(names.at(p.unsafeGetTensorImpl()));
  }
  return groups;
}

const torch::optim::AdamWOptions& options(const torch::optim::AdamW& optimizer, size_t group) {
  return static_cast<const torch::optim::AdamWOptions&>(optimizer.param_groups()[group].options());
}

}  // namespace

TEST_CASE("weight-decay exemption follows HuggingFace's names", "[optimizer]") {
  for (const char* name : {"bert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.bias",
                           "bert.encoder.layer.0.output.dense.bias", "heads.sst.classifier.bias",
                           "heads.x.layer_norm.weight", "encoder.final_layernorm.weight", "bias",
                           "bert.encoder.rel_bias"}) {
    INFO(name);
    CHECK(mtbert::exempt_from_weight_decay(name));
  }
  for (const char* name : {"bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.output.dense.weight",
                           "heads.sst.classifier.weight", "weight", "bert.bias_scale.weight"}) {
    INFO(name);
    CHECK_FALSE(mtbert::exempt_from_weight_decay(name));
  }
  CHECK(mtbert::is_encoder_parameter("bert.embeddings.word_embeddings.weight"));
  CHECK_FALSE(mtbert::is_encoder_parameter("heads.bert.classifier.weight"));
  CHECK_FALSE(mtbert::is_encoder_parameter("bertish.weight"));
}

TEST_CASE("four parameter groups: encoder and heads, with and without decay", "[optimizer]") {
  const auto model = fixture_model();
  mtbert::TrainSection train;
  train.lr = 2e-5;
  train.head_lr = 1e-3;
  train.weight_decay = 0.01;
  train.adam_beta1 = 0.8;
  train.adam_beta2 = 0.99;
  train.adam_eps = 1e-6;
  const auto optimizer = mtbert::make_optimizer(*model, train, mtbert::is_encoder_parameter);
  const auto groups = group_names(*model, *optimizer);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0] == std::set<std::string>{"bert.embeddings.word_embeddings.weight",
                                           "bert.encoder.layer.0.output.dense.weight", "bert.pooler.dense.weight"});
  CHECK(groups[1] == std::set<std::string>{"bert.embeddings.LayerNorm.weight", "bert.embeddings.LayerNorm.bias",
                                           "bert.encoder.layer.0.output.dense.bias",
                                           "bert.encoder.layer.0.output.LayerNorm.weight",
                                           "bert.encoder.layer.0.output.LayerNorm.bias", "bert.pooler.dense.bias"});
  CHECK(groups[2] == std::set<std::string>{"heads.sst.classifier.weight", "heads.sts.classifier.weight"});
  CHECK(groups[3] == std::set<std::string>{"heads.sst.classifier.bias", "heads.sts.classifier.bias",
                                           "heads.sts.norm.weight", "heads.sts.norm.bias"});

  const std::vector<double> lr{2e-5, 2e-5, 1e-3, 1e-3}, decay{0.01, 0.0, 0.01, 0.0};
  for (size_t g = 0; g < 4; ++g) {
    INFO("group " << g);
    CHECK(options(*optimizer, g).lr() == lr[g]);
    CHECK(options(*optimizer, g).weight_decay() == decay[g]);
    CHECK(std::get<0>(options(*optimizer, g).betas()) == 0.8);
    CHECK(std::get<1>(options(*optimizer, g).betas()) == 0.99);
    CHECK(options(*optimizer, g).eps() == 1e-6);
  }
  train.head_lr = 0;
  CHECK(options(*mtbert::make_optimizer(*model, train, mtbert::is_encoder_parameter), 2).lr() == 2e-5);
}

TEST_CASE("a frozen encoder leaves its groups empty but in place", "[optimizer]") {
  const auto model = fixture_model();
  for (auto& item : model->named_parameters())
    if (mtbert::is_encoder_parameter(item.key())) item.value().set_requires_grad(false);
  const auto optimizer = mtbert::make_optimizer(*model, mtbert::TrainSection{}, mtbert::is_encoder_parameter);
  const auto groups = group_names(*model, *optimizer);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].empty());
  CHECK(groups[1].empty());
  CHECK(groups[2].size() == 2);
  CHECK(groups[3].size() == 4);
  optimizer->zero_grad();
  for (const auto& p : model->parameters())
    if (p.requires_grad()) p.mutable_grad() = torch::ones_like(p);
  optimizer->step();  // empty groups step without complaint
}

TEST_CASE("decoupled weight decay shrinks weights by lr * wd, never biases or LayerNorm", "[optimizer]") {
  // With a zero gradient Adam's update is 0 / (0 + eps) = 0: only the decay
  // p <- p (1 - lr wd) acts.
  const auto model = fixture_model();
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.fill_(1.0);
  mtbert::TrainSection train;
  train.lr = 0.1;
  train.head_lr = 0.5;
  train.weight_decay = 0.01;
  const auto optimizer = mtbert::make_optimizer(*model, train, mtbert::is_encoder_parameter);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::zeros_like(p);
  optimizer->step();
  for (const auto& item : model->named_parameters()) {
    INFO(item.key());
    const bool head = !mtbert::is_encoder_parameter(item.key());
    const bool decayed = item.key() == "bert.embeddings.word_embeddings.weight" ||
                         item.key() == "bert.encoder.layer.0.output.dense.weight" ||
                         item.key() == "bert.pooler.dense.weight" || item.key() == "heads.sst.classifier.weight" ||
                         item.key() == "heads.sts.classifier.weight";
    const double expected = decayed ? 1.0 - (head ? 0.5 : 0.1) * 0.01 : 1.0;
    CHECK(torch::allclose(item.value(), torch::full_like(item.value(), expected), 0.0, 1e-6));
  }
}
