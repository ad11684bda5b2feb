#pragma once
// Reading and writing the safetensors format (8-byte little-endian header
// length, a JSON header of {name: {dtype, shape, data_offsets}}, raw data).
// It is the project's weight format: simple, safe to parse (no pickle), and
// readable from Python with a few lines (scripts/mtbert_py/safetensors_io.py).
#include <filesystem>
#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace mtbert {

using NamedTensors = std::map<std::string, at::Tensor>;

struct SafetensorsFile {
  NamedTensors tensors;
  std::map<std::string, std::string> metadata;  // the optional "__metadata__"
};

// Reads every tensor (CPU, contiguous, in its stored dtype). A truncated or
// malformed file is a UserError naming the file and what is wrong.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

// Writes atomically (temporary name, then rename).
void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace mtbert
