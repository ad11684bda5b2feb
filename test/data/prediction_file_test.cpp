// The expected bytes are what the CS224N minBERT starter code writes:
//   f.write(f"id \t Predicted_Sentiment \n")
//   for p, s in zip(ids, predictions): f.write(f"{p} , {s} \n")
// with numpy int64 predictions for SST/CFIMDB and numpy float32 ones for Quora
// (sigmoid().round()) and STS.
#include "data/prediction_file.h"

#include <fstream>
#include <sstream>

#include "core/internal_error.h"
#include "core/user_error.h"
#include "support/temp_dir.h"
#include "support/test_support.h"

namespace {

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("standard file names", "[prediction_file]") {
  CHECK(mtbert::prediction_file_name("sst", "dev") == "sst-dev-output.csv");
  CHECK(mtbert::prediction_file_name("para", "test") == "para-test-output.csv");
  CHECK(mtbert::prediction_file_name("sts", "dev") == "sts-dev-output.csv");
  CHECK(mtbert::prediction_file_name("cfimdb", "test") == "cfimdb-test-output.csv");
}

TEST_CASE("the leaderboard layout, byte for byte", "[prediction_file]") {
  mtbert::test::TempDir dir;
  const auto sst_path = dir / "sst-dev-output.csv";
  mtbert::write_prediction_file(sst_path, mtbert::builtin_task("sst"), {"a7d575c9ed86ea9633660c67e", "33cfa329"},
                                {3.0, 0.0});
  CHECK(read_bytes(sst_path) ==
        "id \t Predicted_Sentiment \n"
        "a7d575c9ed86ea9633660c67e , 3 \n"
        "33cfa329 , 0 \n");

  const auto para_path = dir / "para-test-output.csv";
  mtbert::write_prediction_file(para_path, mtbert::builtin_task("para"), {"p1", "p2"}, {1.0, 0.0});
  CHECK(read_bytes(para_path) == "id \t Predicted_Is_Paraphrase \np1 , 1.0 \np2 , 0.0 \n");

  const auto sts_path = dir / "sts-dev-output.csv";
  mtbert::write_prediction_file(sts_path, mtbert::builtin_task("sts"), {"s1", "s2", "s3"},
                                {3.4567854, 4.0, 0.1 + 0.2});
  // 0.1 + 0.2 = 0.30000000000000004 in double, 0.3 as a float32.
  CHECK(read_bytes(sts_path) == "id \t Predicted_Similiarity \ns1 , 3.4567854 \ns2 , 4.0 \ns3 , 0.3 \n");

  const auto cfimdb_path = dir / "cfimdb-dev-output.csv";
  mtbert::write_prediction_file(cfimdb_path, mtbert::builtin_task("cfimdb"), {"c1"}, {1.0});
  CHECK(read_bytes(cfimdb_path) == "id \t Predicted_Sentiment \nc1 , 1 \n");

  // Empty splits still get their header; nothing else is left in the folder.
  mtbert::write_prediction_file(dir / "empty.csv", mtbert::builtin_task("sst"), {}, {});
  CHECK(read_bytes(dir / "empty.csv") == "id \t Predicted_Sentiment \n");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++files;
  CHECK(files == 5);
}

TEST_CASE("float32 predictions are spelled as numpy prints them", "[prediction_file]") {
  // str(numpy.float32(v)) with numpy 1.24.2, for each v on the left.
  const auto& sts = mtbert::builtin_task("sts");
  const std::vector<std::pair<double, std::string>> cases = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {3.0, "3.0"},
      {-2.5, "-2.5"},
      {0.1, "0.1"},
      {3.4567854, "3.4567854"},
      {0.30000001, "0.3"},
      {123456.0, "123456.0"},
      {16777216.0, "16777216.0"},
      {1e15, "1000000000000000.0"},
      {9.99e15, "9990000000000000.0"},
      {1e16, "1e+16"},
      {1.5e16, "1.5e+16"},
      {3.4028235e38, "3.4028235e+38"},
      {2.5e-4, "0.00025"},
      {1e-4, "1e-04"},  // float32(1e-4) is just below 1e-4
      {9.999e-5, "9.999e-05"},
      {1.5e-5, "1.5e-05"},
      {1.2345e-7, "1.2345e-07"},
      {1e-45, "1e-45"},
  };
  for (const auto& [value, expected] : cases) {
    INFO(value);
    CHECK(mtbert::format_prediction(sts, value) == expected);
  }
  CHECK(mtbert::format_prediction(mtbert::builtin_task("sst"), 4.0) == "4");
}

TEST_CASE("prediction files: mismatched inputs and unwritable places", "[prediction_file]") {
  mtbert::test::TempDir dir;
  CHECK_THROWS_AS(mtbert::prediction_file_contents(mtbert::builtin_task("sst"), {"a"}, {1.0, 2.0}),
                  mtbert::InternalError);
  CHECK_THROWS_AS(mtbert::write_prediction_file(dir / "no" / "such" / "dir.csv", mtbert::builtin_task("sst"), {"a"},
                                                {1.0}),
                  mtbert::UserError);
}

TEST_CASE("prediction files read back what was written", "[prediction_file]") {
  mtbert::test::TempDir dir;
  const auto path = dir / "sts-dev-output.csv";
  mtbert::write_prediction_file(path, mtbert::builtin_task("sts"), {"a1", "b2"}, {3.4567854, 1e-5});
  const auto file = mtbert::read_prediction_file(path);
  CHECK(file.ids == std::vector<std::string>{"a1", "b2"});
  // The file holds the shortest digits of the float32: they read back as that float32.
  CHECK(static_cast<float>(file.predictions[0]) == 3.4567854f);
  CHECK(static_cast<float>(file.predictions[1]) == 1e-5f);
}

TEST_CASE("prediction files: a bad header or row is named with its line", "[prediction_file]") {
  using Catch::Matchers::ContainsSubstring;
  mtbert::test::TempDir dir;
  CHECK_THROWS_WITH(mtbert::read_prediction_file(dir / "absent.csv"), ContainsSubstring("absent.csv: cannot read"));
  CHECK_THROWS_WITH(mtbert::read_prediction_file(dir.write("h.csv", "sentence \t x \n")), ContainsSubstring("h.csv:1: expected the header"));
  CHECK_THROWS_WITH(mtbert::read_prediction_file(dir.write("r.csv", "id \t Predicted_Sentiment \na , 1 \nb 2 \n")),
                    ContainsSubstring("r.csv:3: expected \"<id> , <prediction>\""));
  CHECK_THROWS_WITH(mtbert::read_prediction_file(dir.write("v.csv", "id \t Predicted_Sentiment \na , one \n")),
                    ContainsSubstring("v.csv:2:"));
}
