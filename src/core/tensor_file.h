#pragma once
// Dictionaries of tensors in PyTorch's `torch.save` (zip) format, so that
// Python's torch.load reads what we write and we read what it writes.
#include <filesystem>
#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace mtbert {

// Reads a `torch.save`d dict of tensors. A missing file, a file in the legacy
// (pre-1.6) format, or anything but a {str: Tensor} dict is a UserError naming
// the file.
std::map<std::string, at::Tensor> read_tensor_dict(const std::filesystem::path& path);

// Writes atomically.
void write_tensor_dict(const std::filesystem::path& path, const std::map<std::string, at::Tensor>& tensors);

}  // namespace mtbert
