#include "text/sentencepiece_engine.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPluginName = "libmtbert_sentencepiece.so";

// Where the plugin may be: an explicit override, next to the running program
// (and one folder up, for the test binary in build/test/), and the build tree
// this library was compiled for.
std::vector<fs::path> plugin_candidates() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("MTBERT_PLUGIN_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path());
    dirs.push_back(exe.parent_path().parent_path());
  }
  dirs.emplace_back(MTBERT_PLUGIN_BUILD_DIR);
  std::vector<fs::path> candidates;
  for (const auto& dir : dirs) candidates.push_back(dir / kPluginName);
  return candidates;
}

const SentencePieceApi* load_plugin() {
  std::string tried;
  for (const auto& candidate : plugin_candidates()) {
    tried += (tried.empty() ? "" : ", ") + candidate.string();
    if (!fs::exists(candidate)) continue;
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!handle) throw UserError(fmt::format("cannot load {}: {}", candidate.string(), ::dlerror()));
    auto entry = reinterpret_cast<const SentencePieceApi* (*)()>(::dlsym(handle, "mtbert_sentencepiece_api"));
    if (!entry) throw UserError(fmt::format("{} is not mtbert's SentencePiece plugin", candidate.string()));
    return entry();
  }
  throw UserError(fmt::format("SentencePiece support needs {} (built with mtbert); looked in {}; set "
                              "MTBERT_PLUGIN_DIR to its folder",
                              kPluginName, tried));
}

}  // namespace

const SentencePieceApi& sentencepiece_api() {
  static std::once_flag once;
  static const SentencePieceApi* api = nullptr;
  std::call_once(once, [] { api = load_plugin(); });
  return *api;
}

}  // namespace mtbert
