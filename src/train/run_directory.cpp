#include "train/run_directory.h"

#include <fstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_file.h"
#include "core/remove_tree.h"
#include "core/user_error.h"

namespace mtbert {

namespace fs = std::filesystem;

RunDirectory::RunDirectory(fs::path root) : root_(std::move(root)) {}

void RunDirectory::create() const {
  std::error_code ec;
  for (const fs::path& dir : {root_, checkpoints_dir(), predictions_dir()}) {
    fs::create_directories(dir, ec);
    if (ec) throw UserError(fmt::format("cannot create run folder {}: {}", dir.string(), ec.message()));
  }
}

void RunDirectory::discard_unstarted(bool remove_root) const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return;
  bool others = false;  // than run.lock
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    if (entry.path() == lock_file()) continue;
    if (entry.path() == train_log()) others = true;
    else remove_tree(entry.path(), ec);
  }
  if (!remove_root || others) return;
  fs::remove(lock_file(), ec);
  fs::remove(root_, ec);
}

bool RunDirectory::has_checkpoint(const std::string& name) const {
  return fs::is_directory(checkpoint(name)) || fs::is_directory(checkpoint(name + ".old"));
}

fs::path RunDirectory::checkpoint_to_read(const std::string& name) const {
  if (fs::is_directory(checkpoint(name))) return checkpoint(name);
  if (fs::is_directory(checkpoint(name + ".old"))) return checkpoint(name + ".old");
  throw UserError(fmt::format("{} has no {} checkpoint", root_.string(), name));
}

void RunDirectory::replace_checkpoint(const std::string& name, const std::function<void(const fs::path&)>& write) const {
  const fs::path target = checkpoint(name), tmp = checkpoint(name + ".tmp"), old = checkpoint(name + ".old");
  std::error_code ec;
  remove_tree(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  try {
    write(tmp);
  } catch (...) {
    remove_tree(tmp, ec);  // <name> and <name>.old stay as they were
    throw;
  }
  // A previous interruption may have left only <name>.old: it is superseded now.
  if (fs::exists(target)) {
    remove_tree(old, ec);
    fs::rename(target, old, ec);
    if (ec) throw UserError(fmt::format("cannot replace {}: {}", target.string(), ec.message()));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    const std::string reason = ec.message();
    remove_tree(tmp, ec);  // <name>.old still holds the last good checkpoint
    throw UserError(fmt::format("cannot replace {}: {}", target.string(), reason));
  }
  remove_tree(old, ec);
}

void RunDirectory::append_metrics(const nlohmann::json& row) const {
  append_line(metrics(), json_text(row));
}

std::vector<nlohmann::json> RunDirectory::read_metrics() const {
  std::vector<nlohmann::json> rows;
  std::ifstream in(metrics());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto row = try_parse_json_text(line);
    if (!row) break;  // a line torn by a crash: what follows cannot be trusted
    rows.push_back(std::move(*row));
  }
  return rows;
}

void RunDirectory::truncate_metrics(int64_t step) const {
  std::string kept;
  for (const auto& row : read_metrics())
    if (row.value("step", int64_t{0}) <= step) kept += json_text(row) + "\n";
  write_text_atomically(metrics(), kept);
}

void RunDirectory::write_summary(const nlohmann::json& summary) const {
  write_text_atomically(this->summary(), json_text(summary, 2) + "\n");
}

namespace {

// The shape of summary.json as the status, table and report code read it: a
// file edited by hand fails here, once, with the key, not as a type error
// deep inside one of them.
void check_summary_shape(const nlohmann::json& summary, const std::string& file) {
  auto fail = [&](const std::string& key, const char* expected) {
    throw UserError(fmt::format("{}: {}: expected {}; the file was edited or damaged: restore it, or remove it", file,
                                key, expected));
  };
  if (!summary.is_object()) fail("(top level)", "an object");
  auto check = [&](const nlohmann::json& in, const std::string& prefix, const char* key, bool (nlohmann::json::*is)() const,
                   const char* expected) {
    const auto it = in.find(key);
    if (it != in.end() && !((*it).*is)()) fail(prefix + key, expected);
  };
  check(summary, "", "status", &nlohmann::json::is_string, "a string");
  check(summary, "", "name", &nlohmann::json::is_string, "a string");
  check(summary, "", "steps", &nlohmann::json::is_number_integer, "a whole number");
  check(summary, "", "train_seconds", &nlohmann::json::is_number, "a number");
  if (const auto tags = summary.find("tags"); tags != summary.end()) {
    if (!tags->is_array()) fail("tags", "a list of strings");
    for (const auto& tag : *tags)
      if (!tag.is_string()) fail("tags", "a list of strings");
  }
  for (const char* part : {"best", "test"}) {
    const auto scores = summary.find(part);
    if (scores == summary.end()) continue;
    const std::string prefix = std::string(part) + ".";
    if (!scores->is_object()) fail(part, "an object");
    check(*scores, prefix, "overall", &nlohmann::json::is_number, "a number");
    check(*scores, prefix, "step", &nlohmann::json::is_number_integer, "a whole number");
    check(*scores, prefix, "epoch", &nlohmann::json::is_number_integer, "a whole number");
    const nlohmann::json& tasks = scores->contains("dev") ? (*scores)["dev"] : *scores;
    if (!tasks.is_object()) fail(prefix + "dev", "an object");
    for (const auto& [task, metrics] : tasks.items()) {
      if (task == "overall" || task == "step" || task == "epoch") continue;
      if (!metrics.is_object()) fail(prefix + task, "an object with the task's metric and value");
      check(metrics, prefix + task + ".", "value", &nlohmann::json::is_number, "a number");
      check(metrics, prefix + task + ".", "metric", &nlohmann::json::is_string, "a string");
    }
  }
}

}  // namespace

nlohmann::json RunDirectory::read_summary() const {
  std::error_code ec;
  if (!fs::exists(summary(), ec)) return nlohmann::json::object();
  nlohmann::json json = read_json_file(summary());
  check_summary_shape(json, summary().string());
  return json;
}

// A pretraining run's resolved config has a top-level corpus section; a
// fine-tuning run's has tasks instead (both written by mtbert).
bool RunDirectory::is_pretraining() const {
  std::ifstream in(resolved_config());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("corpus:", 0) == 0) return true;
  return false;
}

fs::path RunDirectory::started_in() const {
  const nlohmann::json json = read_summary();
  const auto it = json.find("working_directory");
  return it != json.end() && it->is_string() ? fs::path(it->get<std::string>()) : fs::path();
}

std::string path_from_run_start(const std::string& configured, const fs::path& started_in) {
  const fs::path path(configured);
  std::error_code ec;
  if (configured.empty() || path.is_absolute() || started_in.empty() || started_in == fs::current_path(ec))
    return configured;
  const fs::path rebased = started_in / path;
  return fs::exists(rebased, ec) ? rebased.string() : configured;
}

}  // namespace mtbert
