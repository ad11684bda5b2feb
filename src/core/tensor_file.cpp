#include "core/tensor_file.h"

#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <torch/serialize.h>

#include "core/atomic_file.h"
#include "core/runtime.h"
#include "core/user_error.h"

namespace mtbert {

std::map<std::string, at::Tensor> read_tensor_dict(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot open {}", path.string()));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    const std::string reason = first_line(e.what_without_backtrace());
    // Python pickles a one-entry dict with SETITEM (opcode 's' = 115), which
    // LibTorch 1.13's unpickler does not know.
    if (reason.find("Unknown opcode for unpickling at 0x73") != std::string::npos)
      throw UserError(fmt::format("{}: LibTorch {} cannot read a torch.save'd dict with a single entry; save "
                                  "the dict with all its entries",
                                  path.string(), torch_version_string()));
    throw UserError(fmt::format("{}: not a torch.save file in the zip format (save it with torch.save in "
                                "PyTorch >= 1.6): {}",
                                path.string(), reason));
  }
  if (!value.isGenericDict())
    throw UserError(fmt::format("{}: expected a dict of tensors, got {}", path.string(), value.tagKind()));
  std::map<std::string, at::Tensor> result;
  for (const auto& entry : value.toGenericDict()) {
    if (!entry.key().isString())
      throw UserError(fmt::format("{}: dict keys must be strings, got {}", path.string(), entry.key().tagKind()));
    const std::string key = entry.key().toStringRef();
    if (!entry.value().isTensor())
      throw UserError(fmt::format("{}: entry \"{}\" is a {}, not a tensor", path.string(), key,
                                  entry.value().tagKind()));
    result.emplace(key, entry.value().toTensor());
  }
  return result;
}

void write_tensor_dict(const std::filesystem::path& path, const std::map<std::string, at::Tensor>& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, t] : tensors) dict.insert(name, t.detach().to(at::kCPU).contiguous());
  const std::vector<char> bytes = torch::pickle_save(dict);
  write_atomically(path, [&](const std::filesystem::path& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw UserError(fmt::format("cannot write {}: write failed (disk full?)", path.string()));
  });
}

}  // namespace mtbert
