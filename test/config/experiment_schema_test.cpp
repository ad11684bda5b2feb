// The schema (describe() in config/experiment_config.h) against the reference
// of the format, experiments/base.yaml: the same keys, and every value of the
// file read and written back unchanged.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/config_tree.h"
#include "config/env_expansion.h"
#include "config/experiment_config.h"
#include "config/pretrain_config.h"
#include "config/schema_visitors.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

namespace {

using mtbert::ConfigNode;

std::filesystem::path base_yaml() { return mtbert::test::source_dir() / "experiments" / "base.yaml"; }

// Leaf key paths of a config tree with their nodes; a task's keys under
// "tasks.<task>" (every task listed, once per task).
void leaves(const ConfigNode& node, const std::string& prefix, std::vector<std::pair<std::string, const ConfigNode*>>& out) {
  for (const auto& [key, value] : node.entries) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    // model.config is one key whose value is a map of HuggingFace keys.
    if (value.is_map() && path != "model.config") {
      if (path == "tasks") {
        for (const auto& [task, keys] : value.entries) leaves(keys, "tasks.<task>", out);
      } else {
        leaves(value, path, out);
      }
    } else {
      out.emplace_back(path, &value);
    }
  }
}

const ConfigNode* find_path(const ConfigNode& root, const std::string& path) {
  const ConfigNode* node = &root;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    node = node->is_map() ? node->find(part) : nullptr;
    if (!node) return nullptr;
  }
  return node;
}

}  // namespace

TEST_CASE("the schema lists each key once, and experiments/base.yaml documents every one") {
  const auto keys = mtbert::experiment_keys();
  const std::set<std::string> unique(keys.begin(), keys.end());
  CHECK(unique.size() == keys.size());

  std::vector<std::pair<std::string, const ConfigNode*>> in_file;
  const ConfigNode base = mtbert::read_config_file(base_yaml());
  leaves(base, "", in_file);
  for (const auto& [path, node] : in_file) {
    INFO(path);
    CHECK(unique.count(path) == 1);
  }
  // Keys the file does not set are documented in a comment ("# name: ...").
  std::ifstream in(base_yaml());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> set_in_file;
  for (const auto& entry : in_file) set_in_file.insert(entry.first);
  for (const auto& key : keys) {
    if (set_in_file.count(key)) continue;
    INFO(key << " is neither set nor documented in experiments/base.yaml");
    const std::string last = key.substr(key.rfind('.') + 1);
    CHECK(std::regex_search(text, std::regex("\n# " + last + ":")));
  }
}

TEST_CASE("every key of experiments/base.yaml round-trips through config.resolved.yaml") {
  const mtbert::ExperimentConfig config = mtbert::load_experiment(base_yaml());
  const std::string resolved = mtbert::resolved_yaml(config);
  const mtbert::test::TempDir dir;
  const auto written = dir.write("config.resolved.yaml", resolved);
  // Reading the resolved file gives the same config (written again: the same text).
  CHECK(mtbert::resolved_yaml(mtbert::load_experiment(written)) == resolved);

  // Each value of base.yaml (its environment variables expanded) is the one written.
  ConfigNode base = mtbert::read_config_file(base_yaml());
  mtbert::expand_env_in_tree(base);
  const ConfigNode back = mtbert::read_config_file(written);
  std::vector<std::pair<std::string, const ConfigNode*>> in_file;
  leaves(base, "", in_file);
  for (const auto& [path, node] : in_file) {
    if (path.rfind("tasks.<task>.", 0) == 0) continue;  // checked per task below
    INFO(path);
    const ConfigNode* value = find_path(back, path);
    REQUIRE(value);
    CHECK(mtbert::config_node_to_json(*value) == mtbert::config_node_to_json(*node));
  }
  for (const auto& [task, keys] : base.find("tasks")->entries) {
    std::vector<std::pair<std::string, const ConfigNode*>> task_keys;
    leaves(keys, "", task_keys);
    for (const auto& [path, node] : task_keys) {
      INFO("tasks." << task << "." << path);
      const ConfigNode* value = find_path(back, "tasks." + task + "." + path);
      REQUIRE(value);
      CHECK(mtbert::config_node_to_json(*value) == mtbert::config_node_to_json(*node));
    }
  }
}

TEST_CASE("experiments/pretrain/base.yaml sets every pretraining key, and it round-trips") {
  const auto path = mtbert::test::source_dir() / "experiments" / "pretrain" / "base.yaml";
  const auto keys = mtbert::pretrain_keys();
  std::vector<std::pair<std::string, const ConfigNode*>> in_file;
  const ConfigNode base = mtbert::read_config_file(path);
  leaves(base, "", in_file);
  std::set<std::string> set_in_file;
  for (const auto& entry : in_file) set_in_file.insert(entry.first);
  CHECK(set_in_file == std::set<std::string>(keys.begin(), keys.end()));
  // Read, written back, read again: the same resolved text.
  const mtbert::PretrainConfig config = mtbert::load_pretrain_config(path, {"corpus.files=[a.txt]", "model.pretrained=m"});
  const mtbert::test::TempDir dir;
  const auto resolved = dir.write("resolved.yaml", mtbert::resolved_yaml(config));
  CHECK(mtbert::resolved_yaml(mtbert::load_pretrain_config(resolved)) == mtbert::resolved_yaml(config));
}
