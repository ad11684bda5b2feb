// resolved_yaml() of config/experiment_config.h: every key of an experiment
// with its value, in the order of experiments/base.yaml, written so that
// load_experiment() reads back the same config. Strings are double-quoted
// (so that "", "null", "yes" or "0123" stay strings) and their `$` doubled
// (so that environment expansion on reading gives them back unchanged);
// numbers are written with the fewest digits that read back exactly.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/experiment_config.h"
#include "config/yaml_quote.h"

namespace mtbert {

namespace {

std::string quote(const std::string& s) { return yaml_double_quoted(s, Dollars::escape); }

// model.config as a YAML flow collection (JSON-like, with the quoting above).
std::string flow(const nlohmann::json& j) {
  if (j.is_object()) {
    std::vector<std::string> parts;
    for (const auto& [key, value] : j.items()) parts.push_back(quote(key) + ": " + flow(value));
    return "{" + fmt::format("{}", fmt::join(parts, ", ")) + "}";
  }
  if (j.is_array()) {
    std::vector<std::string> parts;
    for (const auto& value : j) parts.push_back(flow(value));
    return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
  }
  if (j.is_string()) return quote(j.get<std::string>());
  return j.dump();  // numbers (shortest exact form), true/false, null
}

class YamlWriter {
 public:
  void begin(const std::string& key) {
    line(key + ":");
    ++depth_;
  }
  void end() { --depth_; }
  void put(const std::string& key, const std::string& value) { line(key + ": " + quote(value)); }
  void put(const std::string& key, const char* value) { put(key, std::string(value)); }
  void put(const std::string& key, bool value) { line(key + ": " + (value ? "true" : "false")); }
  void put(const std::string& key, int64_t value) { line(fmt::format("{}: {}", key, value)); }
  void put(const std::string& key, uint64_t value) { line(fmt::format("{}: {}", key, value)); }
  void put(const std::string& key, double value) { line(fmt::format("{}: {}", key, value)); }
  void put(const std::string& key, const std::vector<std::string>& values) {
    std::vector<std::string> quoted;
    for (const auto& v : values) quoted.push_back(quote(v));
    line(fmt::format("{}: [{}]", key, fmt::join(quoted, ", ")));
  }
  void put_flow(const std::string& key, const nlohmann::json& value) { line(key + ": " + flow(value)); }
  void blank() { text_ += "\n"; }
  const std::string& text() const { return text_; }

 private:
  void line(const std::string& s) { text_ += std::string(2 * depth_, ' ') + s + "\n"; }
  std::string text_;
  int depth_ = 0;
};

void write_task(YamlWriter& w, const TaskConfig& t) {
  w.begin(t.name);
  w.put("type", t.type);
  w.put("train", t.train);
  w.put("dev", t.dev);
  w.put("test", t.test);
  w.put("limit_train", t.limit_train);
  w.put("limit_dev", t.limit_dev);
  w.put("limit_test", t.limit_test);
  w.put("subset", t.subset);
  w.put("loss_weight", t.loss_weight);
  w.put("pooling", t.pooling);
  w.put("pair_mode", t.pair_mode);
  w.put("combine", t.combine);
  w.put("dropout", t.dropout);
  w.put("max_length", t.max_length);
  w.begin("smart");
  w.put("enabled", t.smart.enabled);
  w.put("weight", t.smart.weight);
  w.put("steps", t.smart.steps);
  w.put("step_size", t.smart.step_size);
  w.put("epsilon", t.smart.epsilon);
  w.put("noise_std", t.smart.noise_std);
  w.put("bregman", t.smart.bregman);
  w.put("bregman_weight", t.smart.bregman_weight);
  w.put("momentum", t.smart.momentum);
  w.put("radius", t.smart.radius);
  w.end();
  w.begin("sift");
  w.put("enabled", t.sift.enabled);
  w.put("weight", t.sift.weight);
  w.put("step_size", t.sift.step_size);
  w.put("noise_std", t.sift.noise_std);
  w.end();
  w.end();
}

void write_train(YamlWriter& w, const TrainSection& t) {
  w.begin("train");
  w.put("epochs", t.epochs);
  w.put("max_steps", t.max_steps);
  w.put("batch_size", t.batch_size);
  w.put("eval_batch_size", t.eval_batch_size);
  w.put("lr", t.lr);
  w.put("head_lr", t.head_lr);
  w.put("weight_decay", t.weight_decay);
  w.put("adam_beta1", t.adam_beta1);
  w.put("adam_beta2", t.adam_beta2);
  w.put("adam_eps", t.adam_eps);
  w.put("grad_clip", t.grad_clip);
  w.put("grad_accumulation", t.grad_accumulation);
  w.begin("schedule");
  w.put("kind", t.schedule.kind);
  w.put("warmup_epochs", t.schedule.warmup_epochs);
  w.put("warmup_steps", t.schedule.warmup_steps);
  w.put("final_lr", t.schedule.final_lr);
  w.end();
  w.begin("sampler");
  w.put("kind", t.sampler.kind);
  w.put("temperature", t.sampler.temperature);
  w.put("anneal_min", t.sampler.anneal_min);
  w.put("steps_per_epoch", t.sampler.steps_per_epoch);
  w.end();
  w.begin("pcgrad");
  w.put("enabled", t.pcgrad.enabled);
  w.put("reduction", t.pcgrad.reduction);
  w.end();
  w.put("bucket_by_length", t.bucket_by_length);
  w.put("eval_every_steps", t.eval_every_steps);
  w.put("early_stopping_patience", t.early_stopping_patience);
  w.put("on_bad_row", t.on_bad_row);
  w.end();
}

}  // namespace

std::string resolved_yaml(const ExperimentConfig& c) {
  YamlWriter w;
  w.put("name", c.name);
  w.put("seed", c.seed);
  w.put("threads", c.threads);
  w.put("device", c.device);
  w.put("precision", c.precision);
  w.put("output_dir", c.output_dir);
  w.put("tags", c.tags);
  w.blank();
  w.begin("model");
  w.put("pretrained", c.model.pretrained);
  w.put_flow("config", c.model.config);
  w.put("freeze_encoder", c.model.freeze_encoder);
  w.begin("pals");
  w.put("kind", c.model.pals.kind);
  w.put("rank", c.model.pals.rank);
  w.put("heads", c.model.pals.heads);
  w.end();
  w.begin("tokenizer");
  w.put("kind", c.model.tokenizer.kind);
  w.put("vocab", c.model.tokenizer.vocab);
  w.put("lower_case", c.model.tokenizer.lower_case);
  w.put("model", c.model.tokenizer.model);
  w.put("train_from", c.model.tokenizer.train_from);
  w.put("vocab_size", c.model.tokenizer.vocab_size);
  w.end();
  w.end();
  w.blank();
  w.begin("tasks");
  for (const auto& task : c.tasks) write_task(w, task);
  w.end();
  w.blank();
  write_train(w, c.train);
  return "# Every key of this experiment with its value, defaults included (see experiments/base.yaml).\n" +
         w.text();
}

}  // namespace mtbert
