#include "core/safetensors.h"

#include <algorithm>
#include <fstream>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/input_file.h"
#include "core/json_file.h"
#include "core/limits.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

struct DtypeName {
  const char* name;
  at::ScalarType type;
};

constexpr DtypeName kDtypes[] = {
    {"F64", at::kDouble}, {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16},
    {"I64", at::kLong},   {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},
    {"U8", at::kByte},    {"BOOL", at::kBool},
};

at::ScalarType dtype_from_name(const std::string& name, const std::string& where) {
  for (const auto& d : kDtypes)
    if (name == d.name) return d.type;
  throw UserError(fmt::format("{}: unsupported dtype \"{}\"", where, name));
}

const char* dtype_to_name(at::ScalarType type, const std::string& tensor_name) {
  for (const auto& d : kDtypes)
    if (type == d.type) return d.name;
  throw UserError(fmt::format("cannot write tensor {}: dtype {} has no safetensors name", tensor_name,
                              c10::toString(type)));
}

}  // namespace

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  const std::string file = path.string();
  const uint64_t file_size = check_input_file(path);
  std::ifstream in = open_input_file(path);

  uint64_t header_len = 0;
  unsigned char len_bytes[8];
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(len_bytes), 8))
    throw UserError(fmt::format("{}: not a safetensors file (shorter than its 8-byte header length)", file));
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | len_bytes[i];
  if (header_len > limits::kSafetensorsHeaderBytes)
    throw UserError(fmt::format("{}: a safetensors header of {} bytes; the format allows at most {} (is it a "
                                "safetensors file?)",
                                file, header_len, limits::kSafetensorsHeaderBytes));
  if (header_len > file_size - 8)
    throw UserError(fmt::format("{}: corrupt safetensors file (header of {} bytes in a file of {} bytes)", file,
                                header_len, file_size));

  std::string header_text(header_len, '\0');
  if (!in.read(header_text.data(), static_cast<std::streamsize>(header_len)))
    throw UserError(fmt::format("{}: cannot read its safetensors header", file));
  const nlohmann::json header = parse_json_text(header_text, file + " (safetensors header)");
  if (!header.is_object()) throw UserError(fmt::format("{}: corrupt safetensors header (not an object)", file));

  // Tensors are read straight into their storage: no second copy of a
  // 440 MB checkpoint in memory.
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = file_size - data_start;

  SafetensorsFile result;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // data_offsets of the tensors, to find overlaps
  for (const auto& [name, entry] : header.items()) {
    const std::string where = fmt::format("{}: tensor {}", file, name);
    if (name == "__metadata__") {
      if (!entry.is_object()) throw UserError(fmt::format("{}: __metadata__ is not an object", file));
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string())
          throw UserError(fmt::format("{}: __metadata__ \"{}\" is not a string (the format allows strings only)", file, k));
        result.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      const auto dtype = dtype_from_name(entry.at("dtype").get<std::string>(), where);
      const auto shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      uint64_t nbytes = c10::elementSize(dtype);
      for (auto s : shape) {
        if (s < 0) throw UserError(fmt::format("{}: negative dimension in shape", where));
        if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(s), &nbytes) || nbytes > data_size)
          throw UserError(fmt::format("{}: shape [{}] needs more bytes than the file holds", where,
                                      fmt::join(shape, ", ")));
      }
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size ||
          offsets[1] - offsets[0] != nbytes)
        throw UserError(fmt::format("{}: data_offsets do not match its shape and dtype (file truncated?)", where));
      if (nbytes > 0) ranges.emplace_back(offsets[0], offsets[1]);
      at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
      in.seekg(static_cast<std::streamoff>(data_start + offsets[0]));
      if (!in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(nbytes)))
        throw UserError(fmt::format("{}: could not read its data", where));
      result.tensors.emplace(name, std::move(t));
    } catch (const nlohmann::json::exception& e) {
      const std::string what = e.what();
      throw UserError(fmt::format("{}: malformed header entry ({})", where, what.substr(what.find(']') + 2)));
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      throw UserError(fmt::format("{}: two tensors' data_offsets overlap (bytes {} to {}); the file is damaged", file,
                                  ranges[i].first, std::min(ranges[i].second, ranges[i - 1].second)));
  return result;
}

void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> contiguous;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    at::Tensor t = tensor.detach().to(at::kCPU).contiguous();
    const uint64_t nbytes = t.numel() * t.element_size();
    header[name] = {{"dtype", dtype_to_name(t.scalar_type(), name)},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    contiguous.push_back(std::move(t));
  }
  std::string header_text = json_text(header);
  // Align the data section to 8 bytes, as the reference implementation does.
  header_text.append((8 - header_text.size() % 8) % 8, ' ');

  write_file_atomically(path, [&](FileWriter& out) {
    unsigned char len_bytes[8];
    uint64_t len = header_text.size();
    for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>((len >> (8 * i)) & 0xff);
    out.write(len_bytes, 8);
    out.write(header_text);
    for (const auto& t : contiguous) out.write(t.data_ptr(), t.numel() * t.element_size());
  });
}

}  // namespace mtbert
