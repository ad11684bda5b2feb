// read_safetensors on damaged or hostile files: each is one UserError naming
// the file, found before anything is allocated for it.
#include "core/safetensors.h"

#include <torch/torch.h>

#include <cstring>

#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

// A safetensors file with `header` (JSON text) and `data` after it.
std::filesystem::path write_raw(const mtbert::test::TempDir& dir, const std::string& name, const std::string& header,
                                const std::string& data = "") {
  std::string bytes(8, '\0');
  uint64_t len = header.size();
  std::memcpy(bytes.data(), &len, 8);  // little-endian machines only, as the test machines are
  return dir.write(name, bytes + header + data);
}

}  // namespace

TEST_CASE("safetensors round trip keeps names, dtypes, shapes, values and metadata", "[safetensors]") {
  mtbert::test::TempDir dir;
  mtbert::NamedTensors tensors{{"a", torch::arange(6, torch::kFloat).view({2, 3})},
                               {"b", torch::tensor({1, 2}, torch::kLong)}};
  mtbert::write_safetensors(dir / "w.safetensors", tensors, {{"format", "pt"}});
  const auto read = mtbert::read_safetensors(dir / "w.safetensors");
  CHECK(read.metadata.at("format") == "pt");
  CHECK(torch::equal(read.tensors.at("a"), tensors.at("a")));
  CHECK(torch::equal(read.tensors.at("b"), tensors.at("b")));
}

TEST_CASE("damaged safetensors headers are refused with one line", "[safetensors]") {
  mtbert::test::TempDir dir;
  const std::string f32 = R"("dtype": "F32", )";
  CHECK_THROWS_WITH(mtbert::read_safetensors(write_raw(dir, "deep", "{\"__metadata__\": " + std::string(100000, '[') +
                                                                        std::string(100000, ']') + "}")),
                    ContainsSubstring("deep (safetensors header): JSON nested deeper than 64 levels"));
  CHECK_THROWS_WITH(mtbert::read_safetensors(write_raw(dir, "meta", R"({"__metadata__": {"k": 3}})")),
                    ContainsSubstring("__metadata__ \"k\" is not a string"));
  CHECK_THROWS_WITH(mtbert::read_safetensors(write_raw(
                        dir, "huge", "{\"t\": {" + f32 + R"("shape": [1099511627776, 1099511627776], "data_offsets": [0, 4]}})",
                        std::string(4, '\0'))),
                    ContainsSubstring("tensor t: shape [1099511627776, 1099511627776] needs more bytes than the file holds"));
  CHECK_THROWS_WITH(
      mtbert::read_safetensors(write_raw(dir, "overlap",
                                         "{\"a\": {" + f32 + R"("shape": [2], "data_offsets": [0, 8]}, "b": {)" + f32 +
                                             R"("shape": [2], "data_offsets": [4, 12]}})",
                                         std::string(12, '\0'))),
      ContainsSubstring("overlap: two tensors' data_offsets overlap"));

  std::string len(8, '\0');
  const uint64_t big = 1ull << 40;
  std::memcpy(len.data(), &big, 8);
  CHECK_THROWS_WITH(mtbert::read_safetensors(dir.write("big-header", len + "{}")),
                    ContainsSubstring("a safetensors header of 1099511627776 bytes; the format allows at most"));
  CHECK_THROWS_WITH(mtbert::read_safetensors(dir.path()), ContainsSubstring("is a directory"));
}
