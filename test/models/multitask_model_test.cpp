// The multi-task model: parameter names, the shared/task split, freezing, the
// two forward halves, siamese and cross inputs, twins, and its user errors.
#include <functional>
#include <set>

#include <torch/torch.h>

#include "config/experiment_config.h"
#include "core/user_error.h"
#include "models/bert_layer.h"
#include "models/multitask_model.h"
#include "models/parallel_pals.h"
#include "data/join_batches.h"
#include "support/every_head.h"
#include "support/pal_reference.h"
#include "support/test_support.h"
#include "support/tiny_multitask.h"

using namespace mtbert;
using mtbert::test::head_spec;
using mtbert::test::tiny_batch;
using mtbert::test::tiny_config;
using mtbert::test::tiny_encoder;

namespace {

std::vector<HeadSpec> three_heads() {
  return {head_spec("sst", TaskTarget::classes, 5),
          head_spec("para", TaskTarget::binary, 0, PairMode::cross, PairCombine::concat, Pooling::mean),
          head_spec("sts", TaskTarget::regression, 0, PairMode::siamese, PairCombine::cosine, Pooling::pooler)};
}

MultitaskModel tiny_model() {
  torch::manual_seed(1);
  MultitaskModel model(tiny_encoder(tiny_config()), three_heads());
  model->eval();
  return model;
}

// A model with every head kind, made once with each PAL kind (rank 4, two
// heads) after torch::manual_seed(seed), in eval mode (no dropout), for body.
void with_every_pal_kind(uint64_t seed,
                         const std::function<void(MultitaskModel&, const std::vector<HeadSpec>&)>& body) {
  const auto heads = mtbert::test::every_head_kind();
  PalConfig pals;
  pals.rank = 4;
  pals.heads = 2;
  for (const PalKind kind : {PalKind::none, PalKind::parallel, PalKind::top}) {
    pals.kind = kind;
    INFO("PALs " << static_cast<int>(kind));
    torch::manual_seed(seed);
    MultitaskModel model(tiny_encoder(tiny_config()), heads, pals);
    model->eval();
    body(model, heads);
  }
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

TEST_CASE("forward = heads on pooled encodings, the halves compose to forward", "[models][multitask]") {
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
  CHECK(torch::allclose(model->forward("sts", {a, b}), 5.0 * cos, 1e-6, 1e-6));  // the default cosine map

  for (const auto& [task, segments] : std::vector<std::pair<std::string, std::vector<TokenBatch>>>{
           {"sst", {a}}, {"para", {a}}, {"sts", {a, b}}}) {
    INFO(task);
    auto out = model->forward(task, segments);
    CHECK(torch::equal(model->forward_embedded(task, model->embed(task, segments), segments), out));
    CHECK(torch::equal(model->forward_from_embedding_sums(task, model->embedding_sums(task, segments), segments), out));
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

// --- Projected Attention Layers ------------------------------------------------

namespace {

MultitaskModel tiny_pal_model(PalKind kind) {
  torch::manual_seed(5);
  MultitaskModel model(tiny_encoder(tiny_config()), three_heads(), PalConfig{kind, 4, 2});
  model->eval();
  return model;
}

std::vector<TokenBatch> segments_for(const std::string& task, const TokenBatch& batch) {
  return task == "sts" ? std::vector<TokenBatch>{batch, batch} : std::vector<TokenBatch>{batch};
}

}  // namespace

TEST_CASE("PALs are task parameters under pals.<task>, counted per task", "[models][multitask][pals]") {
  for (const PalKind kind : {PalKind::parallel, PalKind::top}) {
    auto model = tiny_pal_model(kind);
    INFO(enum_name(kind));
    const auto shared = identities(model->shared_parameters());
    for (const auto& task : model->tasks()) {
      const auto own = identities(model->task_parameters(task));
      for (const auto& p : model->named_parameters()) {
        const bool mine = p.key().rfind("pals." + task + ".", 0) == 0 || p.key().rfind("heads." + task + ".", 0) == 0;
        INFO(p.key());
        CHECK(own.count(p.value().unsafeGetTensorImpl()) == (mine ? 1u : 0u));
        if (mine) CHECK(shared.count(p.value().unsafeGetTensorImpl()) == 0);
      }
    }
  }
}

TEST_CASE("a task's output does not depend on other tasks' PALs, and depends on its own", "[models][multitask][pals]") {
  for (const PalKind kind : {PalKind::parallel, PalKind::top}) {
    INFO(enum_name(kind));
    auto model = tiny_pal_model(kind);
    torch::manual_seed(6);
    const auto batch = tiny_batch(3, 6);
    const auto before = model->forward("sst", {batch});
    {
      torch::NoGradGuard no_grad;
      for (const auto& p : model->task_parameters("para")) p.add_(1.0);
      for (const auto& p : model->task_parameters("sts")) p.mul_(-3.0);
    }
    CHECK(torch::equal(model->forward("sst", {batch}), before));
    {
      torch::NoGradGuard no_grad;
      for (const auto& p : model->named_parameters())
        if (p.key().rfind("pals.sst.", 0) == 0) p.value().add_(0.5);
    }
    CHECK(test::max_abs_diff(model->forward("sst", {batch}), before) > 1e-3);
  }
}

TEST_CASE("gradients of a task's loss reach only its own PALs and head, and the encoder",
          "[models][multitask][pals]") {
  for (const PalKind kind : {PalKind::parallel, PalKind::top}) {
    INFO(enum_name(kind));
    auto model = tiny_pal_model(kind);
    const auto batch = tiny_batch(3, 6);
    for (const std::string task : {"sst", "para", "sts"}) {
      INFO(task);
      for (auto& p : model->parameters()) p.mutable_grad().reset();
      const auto out = model->forward(task, segments_for(task, batch));
      out.pow(2).sum().backward();
      for (const auto& p : model->named_parameters()) {
        const std::string& name = p.key();
        const bool pal_or_head = name.rfind("pals.", 0) == 0 || name.rfind("heads.", 0) == 0;
        if (!pal_or_head) continue;
        const bool own = name.rfind("pals." + task + ".", 0) == 0 || name.rfind("heads." + task + ".", 0) == 0;
        INFO(name);
        CHECK(p.value().grad().defined() == own);
      }
      // Every parameter of the task's own PALs learns (V_E, V_D and each layer's attention).
      for (const auto& p : model->named_parameters())
        if (p.key().rfind("pals." + task + ".", 0) == 0) {
          INFO(p.key());
          CHECK(p.value().grad().abs().sum().item<double>() > 0);
        }
    }
  }
}

TEST_CASE("freeze_encoder with PALs leaves only heads and PALs trainable", "[models][multitask][pals]") {
  auto model = tiny_pal_model(PalKind::parallel);
  model->freeze_encoder();
  for (const auto& p : model->named_parameters()) {
    INFO(p.key());
    CHECK(p.value().requires_grad() == (p.key().rfind("heads.", 0) == 0 || p.key().rfind("pals.", 0) == 0));
  }
}

TEST_CASE("parallel PALs whose decoder is zero leave the model as it is without them", "[models][multitask][pals]") {
  // GELU(V_D x) with V_D = 0 is 0: every layer's output LayerNorm sees what it sees without PALs.
  auto with_pals = tiny_pal_model(PalKind::parallel);
  torch::manual_seed(5);
  MultitaskModel without(tiny_encoder(tiny_config()), three_heads());
  without->eval();
  {
    torch::NoGradGuard no_grad;
    auto dst = without->named_parameters();
    for (const auto& p : with_pals->named_parameters()) {
      if (p.key().rfind("pals.", 0) == 0) {
        if (p.key().find(".decoder.") != std::string::npos) p.value().zero_();
        continue;
      }
      dst[p.key()].copy_(p.value());
    }
  }
  const auto batch = tiny_batch(3, 6);
  for (const std::string task : {"sst", "para", "sts"}) {
    INFO(task);
    CHECK(test::max_abs_diff(with_pals->forward(task, segments_for(task, batch)),
                             without->forward(task, segments_for(task, batch))) < 1e-6);
  }
}

TEST_CASE("a top PAL feeds the head, the pooler included, and twins keep their PALs", "[models][multitask][pals]") {
  auto model = tiny_pal_model(PalKind::top);
  const auto batch = tiny_batch(3, 6), other = tiny_batch(3, 6);
  // sts pools with the pooler (a cosine of two different inputs): it must pool
  // the PAL's output, so changing the PAL changes sts.
  const auto before = model->forward("sts", {batch, other});
  auto twin = model->twin();
  CHECK(twin->pal_config().kind == PalKind::top);
  CHECK(torch::equal(twin->forward("sts", {batch, other}), before));
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : model->named_parameters())
      if (p.key().rfind("pals.sts.decoder", 0) == 0) p.value().add_(0.3);
  }
  CHECK(test::max_abs_diff(model->forward("sts", {batch, other}), before) > 1e-4);
}

TEST_CASE("PAL settings that cannot work are user errors", "[models][multitask][pals]") {
  CHECK_THROWS_AS(MultitaskModel(tiny_encoder(tiny_config()), three_heads(), PalConfig{PalKind::parallel, 5, 2}),
                  UserError);
  CHECK_THROWS_AS(MultitaskModel(tiny_encoder(tiny_config()), three_heads(), PalConfig{PalKind::top, 0, 1}),
                  UserError);
}

TEST_CASE("a parallel PAL joins each layer as LN(a + FFN(a) + PAL_l(h)), h the layer's input",
          "[models][multitask][pals]") {
  auto model = tiny_pal_model(PalKind::parallel);
  {
    // A decoder far from zero, so that a misplaced PAL cannot hide.
    torch::NoGradGuard no_grad;
    for (const auto& p : model->named_parameters())
      if (p.key().find("pals.sst.decoder.") == 0) p.value().normal_(0, 0.5);
  }
  torch::manual_seed(8);
  const auto batch = tiny_batch(3, 6);
  torch::NoGradGuard no_grad;
  const auto embedded = model->embed("sst", {batch})[0];
  const auto bias = attention_bias_from_mask(batch.attention_mask, embedded.scalar_type());
  EncoderContext ctx;
  ctx.attention_bias = bias;
  auto pals = std::dynamic_pointer_cast<ParallelPalsImpl>((*model->pals)["sst"]);
  REQUIRE(pals);
  auto h = embedded;
  for (size_t l = 0; l < model->bert->encoder->layer->size(); ++l) {
    auto& layer = *model->bert->encoder->layer[l]->as<BertLayer>();
    const auto a = layer.attention(h, ctx, torch::Tensor()).hidden;
    const auto ffn = layer.output->dense(layer.intermediate(a));
    h = layer.output->LayerNorm(a + ffn + pals->forward(static_cast<int64_t>(l), h, bias));
  }
  const auto got = model->encode_segment("sst", embedded, batch).last_hidden_state;
  CHECK(test::max_abs_diff(got, h) < 1e-5);
}

TEST_CASE("one encoder pass over several tasks' batches gives each task's own forward, every head kind and PAL kind",
          "[models][multitask][join]") {
  with_every_pal_kind(9, [](MultitaskModel& model, const std::vector<HeadSpec>& heads) {
    const auto batches = mtbert::test::batch_per_head(heads, 10);
    std::vector<const TaskBatch*> all;
    for (const auto& b : batches) all.push_back(&b);
    const auto outputs = model->forward_joined(join_batches(all));
    REQUIRE(outputs.size() == batches.size());
    for (size_t k = 0; k < batches.size(); ++k) {
      INFO(batches[k].task);
      const auto own = model->forward(batches[k].task, batches[k].segments);
      CHECK(outputs[k].sizes() == own.sizes());
      // Padding is masked; only the order of sums over keys and tokens moves.
      CHECK(torch::allclose(outputs[k], own, 1e-5, 1e-6));
    }
  });
}

// A batch whose rows are all full length, marked so by its producer
// (TokenBatch::padded false, as make_batch and join_batches mark it), runs
// the encoder without a mask: the outputs of the same batch run with its
// all-ones mask, for every head kind and PAL kind, alone and joined.
TEST_CASE("an unpadded batch runs without a mask and gives the masked outputs, every head kind and PAL kind",
          "[models][multitask][join]") {
  with_every_pal_kind(10, [](MultitaskModel& model, const std::vector<HeadSpec>& heads) {
    auto masked = mtbert::test::batch_per_head(heads, 11, /*close_lengths=*/true);
    auto unmasked = masked;
    std::vector<const TaskBatch*> all_masked, all_unmasked;
    for (size_t k = 0; k < masked.size(); ++k) {
      for (size_t s = 0; s < masked[k].segments.size(); ++s) {
        // Every segment 10 tokens long, none of them padding.
        auto& m = masked[k].segments[s];
        m.input_ids = torch::randint(1, 40, {m.input_ids.size(0), 10}, torch::kLong);
        m.attention_mask = torch::ones_like(m.input_ids);
        m.token_type_ids = torch::zeros_like(m.input_ids);
        m.padded = true;  // as a producer that does not know says
        unmasked[k].segments[s] = m;
        unmasked[k].segments[s].padded = false;
      }
      all_masked.push_back(&masked[k]);
      all_unmasked.push_back(&unmasked[k]);
    }
    for (size_t k = 0; k < masked.size(); ++k) {
      INFO(masked[k].task);
      CHECK(torch::equal(model->forward(masked[k].task, masked[k].segments),
                         model->forward(unmasked[k].task, unmasked[k].segments)));
    }
    const auto joined_unmasked = join_batches(all_unmasked);
    CHECK_FALSE(joined_unmasked.tokens.padded);
    const auto joined = model->forward_joined(joined_unmasked);
    const auto joined_masked = model->forward_joined(join_batches(all_masked));
    for (size_t k = 0; k < masked.size(); ++k) CHECK(torch::equal(joined[k], joined_masked[k]));
  });
}

// The pooler runs only for a head that pools with it; the heads' outputs are
// those of an encoder pass with the pooler (the first test above checks them
// against the encoder's output).
TEST_CASE("the pooler runs only when a head reads it", "[models][multitask]") {
  auto model = tiny_model();
  torch::manual_seed(12);
  auto a = tiny_batch(3, 6);
  const auto embedded = model->bert->embed(a.input_ids, a.token_type_ids);
  CHECK_FALSE(model->encode_segment("sst", embedded, a).pooler_output.defined());   // cls
  CHECK_FALSE(model->encode_segment("para", embedded, a).pooler_output.defined());  // mean
  const auto pooled = model->encode_segment("sts", embedded, a);                     // pooler
  REQUIRE(pooled.pooler_output.defined());
  CHECK(torch::equal(pooled.pooler_output,
                     model->bert->forward(a.input_ids, a.attention_mask, a.token_type_ids).pooler_output));
  // A joint pass pools for the parts whose head reads the pooler.
  TaskBatch sst, sts;
  sst.task = "sst";
  sst.segments = {a};
  sts.task = "sts";
  sts.segments = {a, tiny_batch(3, 6)};
  for (auto* b : {&sst, &sts}) {
    for (int64_t i = 0; i < 3; ++i) b->indices.push_back(i);
    b->global_size = 3;
  }
  const auto joined = model->forward_joined(join_batches({&sst, &sts}));
  CHECK(torch::allclose(joined[0], model->forward("sst", sst.segments), 1e-5, 1e-6));
  CHECK(torch::allclose(joined[1], model->forward("sts", sts.segments), 1e-5, 1e-6));
}
