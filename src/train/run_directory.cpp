#include "train/run_directory.h"

#include <fstream>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_file.h"
#include "core/user_error.h"

namespace mtbert {

namespace fs = std::filesystem;

RunDirectory::RunDirectory(fs::path root) : root_(std::move(root)) {}

void RunDirectory::create() const {
  std::error_code ec;
  for (const fs::path& dir : {root_, root_ / "checkpoints", predictions_dir()}) {
    fs::create_directories(dir, ec);
    if (ec) throw UserError(fmt::format("cannot create run folder {}: {}", dir.string(), ec.message()));
  }
}

void RunDirectory::discard_unstarted(bool remove_root) const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return;
  for (const auto& entry : fs::directory_iterator(root_, ec))
    if (entry.path() != train_log()) fs::remove_all(entry.path(), ec);
  if (remove_root && fs::is_empty(root_, ec)) fs::remove(root_, ec);
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
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw UserError(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  write(tmp);
  // A previous interruption may have left only <name>.old: it is superseded now.
  if (fs::exists(target)) {
    fs::remove_all(old, ec);
    fs::rename(target, old, ec);
    if (ec) throw UserError(fmt::format("cannot replace {}: {}", target.string(), ec.message()));
  }
  fs::rename(tmp, target, ec);
  if (ec) throw UserError(fmt::format("cannot replace {}: {}", target.string(), ec.message()));
  fs::remove_all(old, ec);
}

void RunDirectory::append_metrics(const nlohmann::json& row) const {
  std::ofstream out(metrics(), std::ios::app);
  out << row.dump() << '\n';
  out.flush();
  if (!out) throw UserError(fmt::format("cannot append to {}", metrics().string()));
}

std::vector<nlohmann::json> RunDirectory::read_metrics() const {
  std::vector<nlohmann::json> rows;
  std::ifstream in(metrics());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      rows.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::parse_error&) {
      break;  // a line torn by a crash: what follows cannot be trusted
    }
  }
  return rows;
}

void RunDirectory::truncate_metrics(int64_t step) const {
  std::string kept;
  for (const auto& row : read_metrics())
    if (row.value("step", int64_t{0}) <= step) kept += row.dump() + "\n";
  write_text_atomically(metrics(), kept);
}

void RunDirectory::write_summary(const nlohmann::json& summary) const {
  write_text_atomically(this->summary(), summary.dump(2) + "\n");
}

nlohmann::json RunDirectory::read_summary() const {
  if (!fs::exists(summary())) return nlohmann::json::object();
  return read_json_file(summary());
}

}  // namespace mtbert
