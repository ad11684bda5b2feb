#include "core/tensor_file.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <fmt/format.h>
#include <torch/serialize.h>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "core/limits.h"
#include "core/runtime.h"
#include "core/user_error.h"

namespace mtbert {

std::map<std::string, at::Tensor> read_tensor_dict(const std::filesystem::path& path) {
  const std::string text = read_input_file(path, limits::kTensorFileBytes, "torch.save file");
  const std::vector<char> bytes(text.begin(), text.end());
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

namespace {

// torch::pickle_save's zip archive, but with the dict pickled as a plain
// dict: pickle_save tags it with torch.jit._pickle.restore_type_tag, which
// torch.load refuses under weights_only=True (the default from PyTorch 2.6).
std::vector<char> pickle_plain(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler([&](const char* data, size_t size) { pickled.insert(pickled.end(), data, data + size); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    archive.insert(archive.end(), bytes, bytes + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

void write_tensor_dict(const std::filesystem::path& path, const std::map<std::string, at::Tensor>& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [name, t] : tensors) dict.insert(name, t.detach().to(at::kCPU).contiguous());
  const std::vector<char> bytes = pickle_plain(dict);
  write_file_atomically(path, [&](FileWriter& out) { out.write(bytes.data(), bytes.size()); });
}

}  // namespace mtbert
