#include "models/task_head.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/internal_error.h"
#include "core/user_error.h"

namespace mtbert {

namespace F = torch::nn::functional;

namespace {

bool is_cosine(const HeadSpec& spec) {
  return spec.pair_mode == PairMode::siamese && spec.combine == PairCombine::cosine;
}

// Divergences and losses in at least float32: a bf16 softmax loses the small
// differences SMART measures.
torch::Tensor at_least_float(const torch::Tensor& t) {
  return t.scalar_type() == torch::kHalf || t.scalar_type() == torch::kBFloat16 ? t.to(torch::kFloat) : t;
}

torch::Tensor clamp_probability(const torch::Tensor& p) {
  return p.clamp(kCosineProbabilityEps, 1.0 - kCosineProbabilityEps);
}

}  // namespace

void validate_head_spec(const HeadSpec& spec, bool encoder_has_pooler) {
  if (spec.task.empty() || spec.task.find('.') != std::string::npos)
    throw UserError(fmt::format("tasks: task name \"{}\" must be non-empty and contain no '.'; rename it", spec.task));
  // key: the task's config key at fault; empty for what the task's type fixes.
  auto fail = [&](const std::string& key, const std::string& what) {
    throw UserError(fmt::format("tasks.{}{}: {}", spec.task, key.empty() ? "" : "." + key, what));
  };
  if (spec.target == TaskTarget::classes && spec.num_classes < 2)
    fail("", fmt::format("a classification head needs at least 2 classes, got {}", spec.num_classes));
  if (spec.combine != PairCombine::concat && spec.pair_mode != PairMode::siamese)
    fail("combine", fmt::format("{} combines two separately encoded texts; it needs pair_mode: siamese",
                                spec.combine == PairCombine::cosine ? "cosine" : "uv"));
  if (spec.sentence_projection && spec.pair_mode != PairMode::siamese)
    fail("sentence_projection", "projects each of two separately encoded texts; it needs pair_mode: siamese");
  if (is_cosine(spec) && spec.target == TaskTarget::classes)
    fail("combine", fmt::format("cosine gives one similarity score and cannot predict {} classes; use concat",
                                spec.num_classes));
  if (!(spec.dropout >= 0 && spec.dropout < 1)) fail("dropout", fmt::format("must be in [0, 1), got {}", spec.dropout));
  if (is_cosine(spec) && spec.target == TaskTarget::regression && !(spec.regression_max > 0))
    fail("", fmt::format("the cosine score's maximum must be positive, got {}", spec.regression_max));
  if (spec.pooling == Pooling::pooler && !encoder_has_pooler)
    fail("pooling", "pooler needs the encoder's pooler, and this model has none (its checkpoint carries no "
                    "pooler weights); use cls or mean");
}

torch::Tensor pool(const EncoderOutput& out, const torch::Tensor& attention_mask, Pooling pooling) {
  using torch::indexing::Slice;
  const auto& h = out.last_hidden_state;
  switch (pooling) {
    case Pooling::cls:
      return h.index({Slice(), 0});
    case Pooling::mean: {
      auto keep = attention_mask.to(h.scalar_type()).unsqueeze(-1);  // [B, N, 1]
      // A row without any token (never produced by the batching) pools to zeros, not NaN.
      return (h * keep).sum(1) / keep.sum(1).clamp_min(1);
    }
    case Pooling::pooler:
      if (!out.pooler_output.defined())
        throw UserError("pooling: pooler needs the encoder's pooler, and this model has none; use cls or mean");
      return out.pooler_output;
  }
  throw InternalError("pool: unknown pooling");
}

TaskHeadImpl::TaskHeadImpl(const HeadSpec& spec, int64_t hidden_size) : spec_(spec) {
  dropout = register_module("dropout", Dropout(spec_.dropout));
  if (spec_.sentence_projection)
    projection = register_module("projection", torch::nn::Linear(hidden_size, hidden_size));
  if (is_cosine(spec_)) return;  // the score is the cosine itself
  int64_t in = hidden_size;
  if (spec_.pair_mode == PairMode::siamese) in *= spec_.combine == PairCombine::uv ? 2 : 4;
  const int64_t out = spec_.target == TaskTarget::classes ? spec_.num_classes : 1;
  classifier = register_module("classifier", torch::nn::Linear(in, out));
}

torch::Tensor TaskHeadImpl::cosine_output(const torch::Tensor& u, const torch::Tensor& v) const {
  auto cos = F::cosine_similarity(u, v, F::CosineSimilarityFuncOptions().dim(-1));
  const bool regression = spec_.target == TaskTarget::regression;
  const double scale = regression ? spec_.regression_max : 1.0;
  switch (spec_.cosine_map) {
    case CosineMap::scaled: return regression ? scale * cos : cos.clamp(0.0, 1.0);
    case CosineMap::relu: return scale * torch::relu(cos);
    case CosineMap::shifted: return (scale / 2.0) * (cos + 1.0);
  }
  throw InternalError("TaskHead: unknown cosine map");
}

torch::Tensor TaskHeadImpl::forward(const std::vector<torch::Tensor>& pooled) {
  check_invariant(static_cast<int64_t>(pooled.size()) == segments_per_example(spec_),
                  "task {}: expected {} pooled segment(s), got {}", spec_.task, segments_per_example(spec_),
                  pooled.size());
  torch::Tensor x;
  if (spec_.pair_mode == PairMode::siamese) {
    auto u = pooled[0], v = pooled[1];
    if (is_cosine(spec_)) {  // it has no features to drop but the sentence vectors
      u = dropout(u);
      v = dropout(v);
    }
    if (projection) {
      u = projection(u);
      v = projection(v);
    }
    if (is_cosine(spec_)) return cosine_output(u, v);
    x = spec_.combine == PairCombine::uv ? torch::cat({u, v}, -1) : torch::cat({u, v, (u - v).abs(), u * v}, -1);
  } else {
    x = pooled[0];
  }
  auto y = classifier(dropout(x));
  return spec_.target == TaskTarget::classes ? y : y.squeeze(-1);
}

torch::Tensor TaskHeadImpl::loss(const torch::Tensor& outputs, const torch::Tensor& labels) const {
  auto out = at_least_float(outputs);
  switch (spec_.target) {
    case TaskTarget::classes:
      return F::cross_entropy(out, labels.to(torch::kLong));
    case TaskTarget::binary: {
      auto y = labels.to(out.scalar_type());
      if (is_cosine(spec_)) return F::binary_cross_entropy(clamp_probability(out), y);
      return F::binary_cross_entropy_with_logits(out, y);
    }
    case TaskTarget::regression:
      return F::mse_loss(out, labels.to(out.scalar_type()));
  }
  throw InternalError("TaskHead::loss: unknown target");
}

torch::Tensor TaskHeadImpl::predictions(const torch::Tensor& outputs) const {
  switch (spec_.target) {
    case TaskTarget::classes:
      return outputs.argmax(-1).to(torch::kDouble);
    case TaskTarget::binary:
      return (is_cosine(spec_) ? outputs > 0.5 : outputs > 0).to(torch::kDouble);
    case TaskTarget::regression:
      return outputs.to(torch::kDouble);
  }
  throw InternalError("TaskHead::predictions: unknown target");
}

torch::Tensor TaskHeadImpl::probability(const torch::Tensor& outputs) const {
  check_invariant(spec_.target == TaskTarget::binary, "task {}: probability() is for binary heads", spec_.task);
  return is_cosine(spec_) ? outputs : torch::sigmoid(outputs);
}

torch::Tensor TaskHeadImpl::divergence(const torch::Tensor& a, const torch::Tensor& b) const {
  auto x = at_least_float(a);
  auto y = at_least_float(b);
  switch (spec_.target) {
    case TaskTarget::classes: {
      auto lx = torch::log_softmax(x, -1);
      auto ly = torch::log_softmax(y, -1);
      return ((lx.exp() - ly.exp()) * (lx - ly)).sum(-1).mean();
    }
    case TaskTarget::binary: {
      if (is_cosine(spec_)) {
        auto p = clamp_probability(x);
        auto q = clamp_probability(y);
        return ((p - q) * ((p.log() - (-p).log1p()) - (q.log() - (-q).log1p()))).mean();
      }
      return ((torch::sigmoid(x) - torch::sigmoid(y)) * (x - y)).mean();
    }
    case TaskTarget::regression:
      return F::mse_loss(x, y);
  }
  throw InternalError("TaskHead::divergence: unknown target");
}

}  // namespace mtbert
