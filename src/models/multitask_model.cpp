#include "models/multitask_model.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include "core/internal_error.h"
#include "core/user_error.h"
#include "models/parallel_pals.h"
#include "models/top_pal.h"

namespace mtbert {

MultitaskModelImpl::MultitaskModelImpl(BertModel encoder, const std::vector<HeadSpec>& specs, const PalConfig& pals)
    : pal_config_(pals) {
  validate_pal_config(pals, "model.pals");
  const bool has_pooler = static_cast<bool>(encoder->pooler);
  const ModelConfig config = encoder->config();
  const int64_t hidden = config.hidden_size;
  bert = register_module("bert", std::move(encoder));
  torch::nn::ModuleDict dict;
  std::set<std::string> seen;
  for (const auto& spec : specs) {
    validate_head_spec(spec, has_pooler);
    if (!seen.insert(spec.task).second)
      throw UserError(fmt::format("tasks.{}: the task is defined twice; task names must be distinct", spec.task));
    dict->update({{spec.task, TaskHead(spec, hidden).ptr()}});
  }
  heads = register_task_modules("heads", dict);
  if (pals.kind == PalKind::none) return;
  torch::nn::ModuleDict adapters;
  for (const auto& spec : specs) {
    if (pals.kind == PalKind::parallel) adapters->update({{spec.task, ParallelPals(config, pals).ptr()}});
    else adapters->update({{spec.task, TopPal(config, pals).ptr()}});
  }
  this->pals = register_task_modules("pals", adapters);
}

torch::nn::ModuleDict MultitaskModelImpl::register_task_modules(const std::string& name,
                                                                torch::nn::ModuleDict modules) {
  task_groups_.push_back(name + ".");
  return register_module(name, std::move(modules));
}

void MultitaskModelImpl::check_segments(const std::string& task, size_t count) const {
  const int64_t expected = segments_per_example(head(task)->spec());
  check_invariant(static_cast<int64_t>(count) == expected, "task {}: expected {} input segment(s) per batch, got {}",
                  task, expected, count);
}

torch::Tensor MultitaskModelImpl::forward(const std::string& task, const std::vector<TokenBatch>& segments) {
  return forward_embedded(task, embed(task, segments), segments);
}

std::vector<torch::Tensor> MultitaskModelImpl::embed(const std::string& task,
                                                     const std::vector<TokenBatch>& segments) {
  check_segments(task, segments.size());
  std::vector<torch::Tensor> embedded;
  embedded.reserve(segments.size());
  for (const auto& s : segments) embedded.push_back(bert->embed(s.input_ids, s.token_type_ids));
  return embedded;
}

torch::Tensor MultitaskModelImpl::forward_embedded(const std::string& task, const std::vector<torch::Tensor>& embedded,
                                                   const std::vector<TokenBatch>& segments) {
  check_segments(task, segments.size());
  check_invariant(embedded.size() == segments.size(), "task {}: {} embedded segment(s) for {} input(s)", task,
                  embedded.size(), segments.size());
  std::vector<torch::Tensor> pooled;
  pooled.reserve(segments.size());
  const auto spec = head(task)->spec();
  for (size_t i = 0; i < segments.size(); ++i) {
    const auto out = encode_segment(task, embedded[i], segments[i]);
    pooled.push_back(pool(out, segments[i].attention_mask, spec.pooling));
  }
  return head(task)->forward(pooled);
}

EncoderOutput MultitaskModelImpl::encode_segment(const std::string& task, const torch::Tensor& embedded,
                                                 const TokenBatch& inputs) {
  return encode_routed({{task, embedded.size(0)}}, embedded, inputs.encoder_mask());
}

namespace {

// f(k, rows of route k) over the routes, concatenated by rows: a per-task
// module applied to its own rows of a joined input.
template <class F>
torch::Tensor by_route(const std::vector<MultitaskModelImpl::RowRoute>& routes, const torch::Tensor& t, F&& f) {
  if (routes.size() == 1) return f(0, t);
  std::vector<torch::Tensor> parts;
  parts.reserve(routes.size());
  int64_t row = 0;
  for (size_t k = 0; k < routes.size(); ++k) {
    parts.push_back(f(k, t.narrow(0, row, routes[k].rows)));
    row += routes[k].rows;
  }
  return torch::cat(parts);
}

}  // namespace

EncoderOutput MultitaskModelImpl::encode_routed(const std::vector<RowRoute>& routes, const torch::Tensor& embedded,
                                                const torch::Tensor& attention_mask) {
  // The pooler (a product, tanh and in training their backward) only when a
  // head pools with it; the others read the hidden states.
  const bool pooler = std::any_of(routes.begin(), routes.end(), [&](const RowRoute& r) {
    return head(r.task)->spec().pooling == Pooling::pooler;
  });
  auto finish = [&](EncoderOutput out) { return pooler ? bert->pooled(std::move(out)) : out; };
  if (pal_config_.kind == PalKind::none) return finish(bert->run_layers(embedded, attention_mask, EncoderContext{}));
  // The PALs' attention masks padding as the encoder's does.
  const auto bias = attention_bias_from_mask(attention_mask, embedded.scalar_type());
  // Each route's rows of the bias, cut once here rather than in every layer.
  std::vector<torch::Tensor> biases;
  int64_t row = 0;
  for (const auto& r : routes) {
    biases.push_back(routes.size() == 1 || !bias.defined() ? bias : bias.narrow(0, row, r.rows));
    row += r.rows;
  }
  if (pal_config_.kind == PalKind::parallel) {
    std::vector<ParallelPals> own;
    for (const auto& r : routes) own.emplace_back(std::dynamic_pointer_cast<ParallelPalsImpl>((*pals)[r.task]));
    EncoderContext ctx;
    ctx.parallel_adapter = [own, routes, biases](int64_t layer, const torch::Tensor& input) mutable {
      return by_route(routes, input, [&](size_t k, const torch::Tensor& rows) {
        return own[k]->forward(layer, rows, biases[k]);
      });
    };
    return finish(bert->run_layers(embedded, attention_mask, ctx));
  }
  EncoderOutput out = bert->run_layers(embedded, attention_mask, EncoderContext{});
  out.last_hidden_state = by_route(routes, out.last_hidden_state, [&](size_t k, const torch::Tensor& rows) {
    return (*pals)[routes[k].task]->as<TopPalImpl>()->forward(rows, biases[k]);
  });
  return finish(std::move(out));
}

std::vector<torch::Tensor> MultitaskModelImpl::forward_joined(const JoinedBatch& joined) {
  std::vector<RowRoute> routes;
  for (const auto& part : joined.parts) {
    check_segments(part.task, static_cast<size_t>(part.segments));
    routes.push_back({part.task, part.all_rows()});
  }
  const auto& tokens = joined.tokens;
  const EncoderOutput out =
      encode_routed(routes, bert->embed(tokens.input_ids, tokens.token_type_ids), tokens.encoder_mask());
  std::vector<torch::Tensor> outputs;
  outputs.reserve(joined.parts.size());
  for (const auto& part : joined.parts) {
    TaskHead task_head = head(part.task);
    std::vector<torch::Tensor> pooled;
    for (int64_t s = 0; s < part.segments; ++s) {
      const int64_t first = part.segment_row(s);
      EncoderOutput rows{out.last_hidden_state.narrow(0, first, part.rows)};
      if (out.pooler_output.defined()) rows.pooler_output = out.pooler_output.narrow(0, first, part.rows);
      pooled.push_back(pool(rows, tokens.attention_mask.narrow(0, first, part.rows), task_head->spec().pooling));
    }
    outputs.push_back(task_head->forward(pooled));
  }
  return outputs;
}

std::vector<torch::Tensor> MultitaskModelImpl::embedding_sums(const std::string& task,
                                                              const std::vector<TokenBatch>& segments) {
  check_segments(task, segments.size());
  std::vector<torch::Tensor> sums;
  sums.reserve(segments.size());
  for (const auto& s : segments) sums.push_back(bert->embeddings->sum(s.input_ids, s.token_type_ids));
  return sums;
}

torch::Tensor MultitaskModelImpl::forward_from_embedding_sums(const std::string& task,
                                                              const std::vector<torch::Tensor>& sums,
                                                              const std::vector<TokenBatch>& segments) {
  check_invariant(sums.size() == segments.size(), "task {}: {} embedding sum(s) for {} input(s)", task, sums.size(),
                  segments.size());
  std::vector<torch::Tensor> embedded;
  embedded.reserve(sums.size());
  for (const auto& sum : sums) embedded.push_back(bert->embeddings->normalize(sum));
  return forward_embedded(task, embedded, segments);
}

TaskHead MultitaskModelImpl::head(const std::string& task) const {
  if (!heads->contains(task))
    throw UserError(fmt::format("no task \"{}\" in this model; its tasks are {}", task, tasks()));
  return TaskHead(std::dynamic_pointer_cast<TaskHeadImpl>((*heads)[task]));
}

std::vector<std::string> MultitaskModelImpl::tasks() const { return heads->keys(); }

std::vector<torch::Tensor> MultitaskModelImpl::shared_parameters() const {
  std::vector<torch::Tensor> shared;
  for (const auto& item : named_parameters()) {
    const auto& name = item.key();
    bool per_task = false;
    for (const auto& group : task_groups_) per_task = per_task || name.rfind(group, 0) == 0;
    if (!per_task) shared.push_back(item.value());
  }
  return shared;
}

std::vector<torch::Tensor> MultitaskModelImpl::task_parameters(const std::string& task) const {
  head(task);  // an unknown task is an error, not an empty list
  std::vector<torch::Tensor> own;
  for (const auto& item : named_parameters()) {
    const auto& name = item.key();
    for (const auto& group : task_groups_) {
      if (name.rfind(group + task + ".", 0) == 0) {
        own.push_back(item.value());
        break;
      }
    }
  }
  return own;
}

void MultitaskModelImpl::freeze_encoder() {
  for (auto& p : bert->parameters()) p.requires_grad_(false);
}

MultitaskModel MultitaskModelImpl::twin() const {
  std::vector<HeadSpec> specs;
  for (const auto& task : tasks()) specs.push_back(head(task)->spec());
  MultitaskModel copy(BertModel(bert->config(), BertModelOptions{static_cast<bool>(bert->pooler)}), specs,
                      pal_config_);
  torch::NoGradGuard no_grad;
  auto dst_params = copy->named_parameters();
  for (const auto& item : named_parameters()) {
    auto& dst = dst_params[item.key()];
    dst.set_data(item.value().detach().clone());
    dst.requires_grad_(item.value().requires_grad());
  }
  auto dst_buffers = copy->named_buffers();
  for (const auto& item : named_buffers()) dst_buffers[item.key()].set_data(item.value().detach().clone());
  copy->train(is_training());
  return copy;
}

}  // namespace mtbert
