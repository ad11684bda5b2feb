#include "config/config_reference.h"

#include <map>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "config/encoder_config_keys.h"
#include "config/experiment_config.h"
#include "config/pretrain_config.h"
#include "config/schema_visitors.h"

namespace mtbert {

namespace {

// One key of the page.
struct KeyRow {
  std::string path;     // "train.schedule.kind"
  std::string type;
  std::string fallback;  // the default, as YAML
  std::string allowed;
  std::string meaning;
};

// A Markdown table cell: `|` would end the cell, and outside `code` a `<`
// would open an HTML tag ("runs/<name>" would lose its "<name>").
std::string cell(const std::string& text) {
  std::string out;
  bool in_code = false;
  for (char c : text) {
    if (c == '`') in_code = !in_code;
    if (c == '|')
      out += "\\|";
    else if (c == '<' && !in_code)
      out += "&lt;";
    else
      out += c;
  }
  return out;
}

std::string code(const std::string& text) { return "`" + text + "`"; }

// The schema visitor that documents: a row per key, in the schema's order,
// with the value of a default-constructed config as the default.
class KeyDocumenter {
 public:
  template <class T, class... Constraints>
  void key(std::string_view name, const T& value, Constraints... constraints) {
    KeyRow row;
    row.path = prefix_ + std::string(name);
    row.type = type_name(value);
    row.fallback = code(default_text(value));
    row.allowed = choices(value);
    (describe_constraint(row, constraints), ...);
    if (row.meaning.empty())  // every key has a Doc: the test of this page would show the gap
      row.meaning = "(undocumented)";
    rows_.push_back(row);
    if constexpr (std::is_same_v<T, nlohmann::json>) {  // model.config: a table of its own keys
      for (const auto& key : encoder_config_keys())
        rows_.push_back({row.path + "." + key.name, encoder_key_type(key.type),
                         "the folder's (bert-base's when random)", "", key.doc});
    }
  }

  template <class Section>
  void section(std::string_view name, Section& s) {
    const std::string outer = prefix_;
    prefix_ += std::string(name) + ".";
    describe(*this, s);
    prefix_ = outer;
  }

  void tasks(std::string_view name, std::vector<TaskConfig>&) {
    TaskConfig any;
    any.type = "";  // the default is the task's key, which Doc says
    section(std::string(name) + ".<task>", any);
  }

  // `task_defaults:`, the map of task keys that every task inherits: one row,
  // as for model.config, since its keys are the tasks' own.
  void task_defaults(std::string_view name) {
    rows_.push_back({prefix_ + std::string(name), "map", "`{}`", "the keys of `tasks.<task>` but type, train, dev, test",
                     "task keys that every task inherits unless it sets its own"});
  }

  const std::vector<KeyRow>& rows() const { return rows_; }

 private:
  static std::string type_name(bool) { return "bool"; }
  static std::string type_name(int64_t) { return "integer"; }
  static std::string type_name(uint64_t) { return "integer"; }
  static std::string type_name(double) { return "number"; }
  static std::string type_name(const std::string&) { return "string"; }
  static std::string type_name(const std::vector<std::string>&) { return "list of strings"; }
  static std::string type_name(const nlohmann::json&) { return "map"; }
  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  static std::string type_name(E) {
    return "choice";
  }

  template <class T>
  static std::string default_text(const T& value) {
    if constexpr (std::is_enum_v<T>)
      return enum_name(value);  // as written in a config, without the writer's quotes
    else
      return SchemaWriter::text(value);
  }

  template <class T>
  static std::string choices(const T&) {
    if constexpr (std::is_enum_v<T>) {
      std::string out;
      for (const auto& name : enum_names<T>()) out += (out.empty() ? "" : ", ") + code(name);
      return out;
    } else if constexpr (std::is_same_v<T, bool>) {
      return "`true`, `false`";
    } else if constexpr (std::is_same_v<T, nlohmann::json>) {
      return "HuggingFace config.json keys";
    } else {
      return "";
    }
  }

  static std::string because(const char* why) { return why ? fmt::format(" ({})", why) : ""; }
  static void describe_constraint(KeyRow& row, Doc doc) {
    row.meaning = doc.text;
    if (doc.default_means) row.fallback += fmt::format(": {}", doc.default_means);
  }
  static void describe_constraint(KeyRow& row, AtLeast c) { row.allowed = fmt::format(">= {}{}", c.min, because(c.why)); }
  static void describe_constraint(KeyRow& row, Range c) {
    row.allowed = fmt::format("{} to {}{}", c.min, c.max, because(c.why));
  }
  static void describe_constraint(KeyRow& row, Positive) { row.allowed = "> 0"; }
  static void describe_constraint(KeyRow& row, NonNegative) { row.allowed = ">= 0"; }
  static void describe_constraint(KeyRow& row, Fraction c) { row.allowed = c.one_allowed ? "0 to 1" : "0 to 1, below 1"; }
  static void describe_constraint(KeyRow& row, Words) { row.allowed = "letters, digits, `_` and `-`"; }

  std::string prefix_;
  std::vector<KeyRow> rows_;
};

// A table per section (the keys' common prefix), sections in the order the
// schema first names them: a section's own keys stay together even where
// the schema lists its subsections between them (train.schedule in train).
std::string section_tables(const std::vector<KeyRow>& rows, const std::string& root) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const KeyRow*>> by_section;
  for (const auto& row : rows) {
    const auto dot = row.path.rfind('.');
    const std::string section = dot == std::string::npos ? "" : row.path.substr(0, dot);
    if (!by_section.count(section)) order.push_back(section);
    by_section[section].push_back(&row);
  }
  std::string out;
  for (const auto& section : order) {
    out += section.empty() ? fmt::format("### {}: top level\n\n", root) : fmt::format("### `{}`\n\n", section);
    out += "| key | type | default | allowed | meaning |\n| --- | --- | --- | --- | --- |\n";
    for (const KeyRow* row : by_section[section])
      out += fmt::format("| {} | {} | {} | {} | {} |\n", code(row->path), cell(row->type), cell(row->fallback),
                         row->allowed.empty() ? "" : cell(row->allowed), cell(row->meaning));
    out += "\n";
  }
  return out;
}

template <class Config>
std::vector<KeyRow> documented_keys() {
  KeyDocumenter documenter;
  Config config;  // its members' initializers are the defaults
  describe(documenter, config);
  return documenter.rows();
}

// The rules that experiment_config.cpp and pretrain_config.cpp check beyond
// the schema's single-value constraints (check_task, check_train,
// check_experiment, check_model_section, check_pretrain): said here in words,
// since they are code, not data; whoever changes one of them changes its line.
constexpr const char* kExperimentRules =
    "### Rules across keys\n\n"
    "- `name` cannot be `.`, `..` or hold a `/` (it names the run folder).\n"
    "- At least one task. A task's key holds only letters, digits, `_` and `-`; it is a built-in task or "
    "has a `type:`; every task has `train`.\n"
    "- `tasks.<task>.train_fraction` must be above 0.\n"
    "- `tasks.<task>.combine` other than `concat`, and `sentence_projection`, need `pair_mode: siamese`; "
    "`cosine` gives one score, so not for a task of several classes (`sst`).\n"
    "- `train.epochs` may be 0 only with `train.max_steps` > 0.\n"
    "- `train.schedule`: `warmup_epochs` or `warmup_steps`, not both; `final_lr` at most `train.lr`.\n"
    "- `train.sampler.steps_per_epoch` stays 0 with `sequential` and `round_robin`.\n"
    "- `train.pcgrad.enabled` needs `train.sampler.kind: mixed`, `train.grad_accumulation: 1` and an encoder "
    "that `model.freeze_encoder` does not freeze.\n"
    "- `train.early_stopping_patience` above 0 needs a task with `dev`.\n"
    "- `distributed.backend: nccl` needs a `device` other than `cpu`.\n"
    "- `model.pals.rank` is a multiple of `model.pals.heads`; `model.add_pooler` needs `model.pretrained`.\n"
    "- `model.tokenizer.kind`: `auto` needs `model.pretrained`, `wordpiece` needs `vocab`, `sentencepiece` "
    "needs `model` or `train_from`. With `model.pretrained`, the tokenizer and the encoder's shape are the "
    "folder's: another vocabulary, or a `model.config` key that resizes the encoder, is refused when the run "
    "starts.\n\n";

constexpr const char* kPretrainingRules =
    "### Rules across keys\n\n"
    "- The `model` rules of an experiment; `model.freeze_encoder`, `model.add_pooler` and `model.pals` keep "
    "their defaults; `model.tokenizer.train_from` names text files (`[tasks]` is for experiments).\n"
    "- The corpus is not empty: `corpus.files`, or `corpus.tasks` with `corpus.experiment` (each needs the "
    "other).\n"
    "- `corpus.holdout_fraction` is 0 (nothing held out) or between 1e-9 and 0.5.\n"
    "- `masking.mask_token_fraction` + `masking.random_token_fraction` is at most 1.\n"
    "- `train.schedule.final_lr` is at most `train.lr`.\n\n";

}  // namespace

std::string config_reference_markdown() {
  std::string page =
      "# Config reference\n\n"
      "<!-- Generated by `build/mtbert config-reference --output docs/config-reference.md` from the schema\n"
      "     (the describe() functions of src/config/experiment_config.h and pretrain_config.h): edit those,\n"
      "     not this page. The test py.config_reference_test fails when the two differ. -->\n\n"
      "Every key of an experiment (`mtbert train`, `mtbert sweep`) and of a pretraining config\n"
      "(`mtbert pretrain`), with its type, its default (the value when the key is left out), the values\n"
      "it accepts and what it does. A key path such as `train.schedule.kind` is also how a\n"
      "`key=value` override on the command line names it. How files combine (`extends:`, overlays,\n"
      "overrides, `${VAR}`) is in [experiments.md](experiments.md); `experiments/base.yaml` and\n"
      "`experiments/pretrain/base.yaml` set every key in a working file. The rules that relate\n"
      "several keys follow each part's tables; a config that breaks one is refused with a line\n"
      "naming the key.\n\n";
  page += "## Experiments\n\n"
          "A task's keys are under `tasks.<task>`, where `<task>` is a built-in task (`sst`, `para`,\n"
          "`sts`, `cfimdb`) or any name with a `type:`. `model.config` takes HuggingFace `config.json`\n"
          "keys (the encoder's shape, dropouts, the DeBERTa keys of [deberta.md](deberta.md)).\n\n";
  page += section_tables(documented_keys<ExperimentConfig>(), "experiment");
  page += kExperimentRules;
  page += "## Pretraining\n\n"
          "The run keys, `model` and `distributed` mean what they mean in an experiment;\n"
          "`model.freeze_encoder`, `model.add_pooler` and `model.pals` must keep their defaults\n"
          "(pretraining trains the whole encoder, and no pooler or task adapters). See\n"
          "[pretraining.md](pretraining.md).\n\n";
  page += section_tables(documented_keys<PretrainConfig>(), "pretraining");
  page += kPretrainingRules;
  // One trailing newline, as an editor would save the page.
  while (page.size() > 1 && page[page.size() - 1] == '\n' && page[page.size() - 2] == '\n') page.pop_back();
  return page;
}

}  // namespace mtbert
