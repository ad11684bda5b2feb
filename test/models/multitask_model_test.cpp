// The multi-task model: parameter names, the shared/task split, freezing, the
// two forward halves, siamese and cross inputs, twins, and its user errors.
#include <set>

#include <torch/torch.h>

#include "core/user_error.h"
#include "models/multitask_model.h"
#include "test_support.h"
#include "models/tiny_multitask.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

std::vector<HeadSpec> three_heads() {
  return {head_spec("sst", HeadTarget::classes, 5),
          head_spec("para", HeadTarget::binary, 0, PairMode::cross, PairCombine::concat, Pooling::mean),
          head_spec("sts", HeadTarget::regression, 0, PairMode::siamese, PairCombine::cosine, Pooling::pooler)};
}

MultitaskModel tiny_model() {
  torch::manual_seed(1);
  MultitaskModel model(tiny_encoder(tiny_config()), three_heads());
  model->eval();
  return model;
}

std::set<const void*> identities(const std::vector<torch::Tensor>& tensors) {
  std::set<const void*> ids;
  for (const auto& t : tensors) ids.insert(t.unsafeGetTensorImpl());
  return ids;
}

}  // namespace

TEST_CASE("MultitaskModel parameter names are bert.* and heads.<task>.*", "[models][multitask]") {
  auto model = tiny_model();
  std::vector<std::string> names;
  for (const auto& p : model->named_parameters()) names.push_back(p.key());
  // 5 embedding tensors + 16 per layer * 2 + 2 pooler; sst and para heads 2 each; sts (cosine) none.
  CHECK(names.size() == 5 + 16 * 2 + 2 + 2 + 2);
  for (const auto& n : names) CHECK((n.rfind("bert.", 0) == 0 || n.rfind("heads.", 0) == 0));
  auto params = model->named_parameters();
  CHECK(params.contains("bert.embeddings.word_embeddings.weight"));
  CHECK(params.contains("bert.pooler.dense.weight"));
  CHECK(params["heads.sst.classifier.weight"].sizes() == torch::IntArrayRef({5, 8}));
  CHECK(params["heads.para.classifier.weight"].sizes() == torch::IntArrayRef({1, 8}));
  CHECK(model->tasks() == std::vector<std::string>{"sst", "para", "sts"});
}

TEST_CASE("Shared and task parameters are disjoint and cover the model", "[models][multitask]") {
  auto model = tiny_model();
  auto shared = identities(model->shared_parameters());
  CHECK(shared == identities(model->bert->parameters()));
  std::set<const void*> all = shared;
  size_t total = shared.size();
  for (const auto& task : model->tasks()) {
    auto own = identities(model->task_parameters(task));
    CHECK(own == identities(model->head(task)->parameters()));
    for (auto* p : own) CHECK(shared.count(p) == 0);
    all.insert(own.begin(), own.end());
    total += own.size();
  }
  CHECK(all.size() == total);  // no parameter counted twice
  CHECK(all == identities(model->parameters()));
  CHECK_THROWS_AS(model->task_parameters("nope"), UserError);
}

TEST_CASE("Task modules registered later belong to their task", "[models][multitask]") {
  // What adapters (PALs) will do: a ModuleDict of per-task modules under its own name.
  auto model = tiny_model();
  torch::nn::ModuleDict pals;
  for (const auto& task : model->tasks()) pals->update({{task, torch::nn::Linear(8, 8).ptr()}});
  model->register_task_modules("pals", pals);
  CHECK(model->named_parameters().contains("pals.sst.weight"));
  auto sst = identities(model->task_parameters("sst"));
  CHECK(sst.size() == 4);  // head weight and bias, adapter weight and bias
  CHECK(sst.count(pals["sst"]->named_parameters()["weight"].unsafeGetTensorImpl()) == 1);
  CHECK(identities(model->shared_parameters()) == identities(model->bert->parameters()));
}

TEST_CASE("freeze_encoder leaves only the heads trainable", "[models][multitask]") {
  auto model = tiny_model();
  model->freeze_encoder();
  for (const auto& p : model->named_parameters()) {
    INFO(p.key());
    CHECK(p.value().requires_grad() == (p.key().rfind("heads.", 0) == 0));
  }
  // Training still works, and no gradient reaches the encoder.
  auto batch = tiny_batch(3, 6);
  auto loss = model->head("sst")->loss(model->forward("sst", {batch}), torch::tensor({0.f, 3.f, 4.f}));
  loss.backward();
  CHECK(model->head("sst")->classifier->weight.grad().defined());
  for (const auto& p : model->bert->parameters()) CHECK(!p.grad().defined());
}

TEST_CASE("forward = heads on pooled encodings; the halves compose to forward", "[models][multitask]") {
  auto model = tiny_model();
  torch::manual_seed(2);
  auto a = tiny_batch(3, 6);
  auto b = tiny_batch(3, 5);

  // Single input: the sst head on the first token of the encoder's output.
  auto enc = model->bert->forward(a.input_ids, a.attention_mask, a.token_type_ids);
  auto expected = model->head("sst")->forward({enc.last_hidden_state.select(1, 0)});
  CHECK(torch::allclose(model->forward("sst", {a}), expected, 1e-6, 1e-6));

  // Cross pair with mean pooling over non-padded tokens.
  auto keep = a.attention_mask.unsqueeze(-1).to(torch::kFloat);
  auto mean = (enc.last_hidden_state * keep).sum(1) / keep.sum(1);
  CHECK(torch::allclose(model->forward("para", {a}), model->head("para")->forward({mean}), 1e-6, 1e-6));

  // Siamese: each text encoded on its own, pooler outputs compared by cosine.
  auto enc_b = model->bert->forward(b.input_ids, b.attention_mask, b.token_type_ids);
  auto cos = torch::cosine_similarity(enc.pooler_output, enc_b.pooler_output, 1);
  CHECK(torch::allclose(model->forward("sts", {a, b}), 2.5 * (cos + 1), 1e-6, 1e-6));

  for (const auto& [task, segments] : std::vector<std::pair<std::string, std::vector<EncoderInputs>>>{
           {"sst", {a}}, {"para", {a}}, {"sts", {a, b}}}) {
    INFO(task);
    auto out = model->forward(task, segments);
    CHECK(torch::equal(model->forward_embedded(task, model->embed(task, segments), segments), out));
    CHECK(torch::equal(model->forward_from_word_embeddings(task, model->word_embed(task, segments), segments), out));
  }
}

TEST_CASE("MultitaskModel user errors", "[models][multitask]") {
  auto heads = three_heads();
  // "pooler" pooling on an encoder without a pooler is refused at construction.
  try {
    MultitaskModel model(tiny_encoder(tiny_config(), /*with_pooler=*/false), heads);
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("tasks.sts.pooling") != std::string::npos);
  }
  heads.pop_back();
  CHECK_NOTHROW(MultitaskModel(tiny_encoder(tiny_config(), false), heads));
  heads.push_back(heads[0]);
  CHECK_THROWS_AS(MultitaskModel(tiny_encoder(tiny_config()), heads), UserError);  // sst twice

  auto model = tiny_model();
  try {
    model->head("quora");
    FAIL("expected a UserError");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("\"sst\", \"para\", \"sts\"") != std::string::npos);
  }
}

TEST_CASE("twin copies architecture, weights and mode, with its own storage", "[models][multitask]") {
  auto model = tiny_model();
  model->bert->encoder->layer[0]->parameters()[0].requires_grad_(false);
  auto copy = model->twin();
  auto src = model->named_parameters();
  auto dst = copy->named_parameters();
  REQUIRE(src.keys() == dst.keys());
  for (const auto& item : src) {
    INFO(item.key());
    CHECK(torch::equal(item.value(), dst[item.key()]));
    CHECK(item.value().data_ptr() != dst[item.key()].data_ptr());
    CHECK(item.value().requires_grad() == dst[item.key()].requires_grad());
  }
  CHECK(!copy->is_training());
  CHECK(static_cast<bool>(copy->bert->pooler));
  torch::manual_seed(4);
  auto a = tiny_batch(2, 5);
  auto b = tiny_batch(2, 4);
  CHECK(torch::equal(copy->forward("sts", {a, b}), model->forward("sts", {a, b})));
  {
    torch::NoGradGuard no_grad;
    model->head("sst")->classifier->weight.add_(1.0);
  }
  CHECK(!torch::equal(copy->head("sst")->classifier->weight, model->head("sst")->classifier->weight));
}
