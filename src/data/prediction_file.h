#pragma once
// Prediction files in the CS224N leaderboard's layout, byte for byte what the
// minBERT starter code writes (`f.write(f"id \t {column} \n")`, then
// `f"{id} , {prediction} \n"` per example, in the split's order):
//
//   id \t Predicted_Sentiment \n
//   a7d575c9ed86ea9633660c67e , 3 \n
//
// Predictions are spelled as Python prints the starter code's numpy values:
// class indices as integers, Quora's rounded probabilities and STS scores as
// float32 ("1.0", "3.4567854"); see PredictionFormat.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "data/task_spec.h"

namespace mtbert {

// The starter code's file name for a task's split: "sst-dev-output.csv",
// "para-test-output.csv", "sts-dev-output.csv".
std::string prediction_file_name(std::string_view task, std::string_view split);

// One prediction as the file spells it. float32: the value rounded to float32
// and written as Python's str() of a numpy float32 (the shortest digits that
// read back as the same float32; positional from 1e-4 up to 1e16, scientific
// outside: "1e-05", "1.5e+16").
std::string format_prediction(const TaskSpec& task, double value);

// The whole file. ids and predictions are parallel (InternalError
// otherwise).
std::string prediction_file_contents(const TaskSpec& task, const std::vector<std::string>& ids,
                                     const std::vector<double>& predictions);

// Writes prediction_file_contents() to `path` atomically.
void write_prediction_file(const std::filesystem::path& path, const TaskSpec& task,
                           const std::vector<std::string>& ids, const std::vector<double>& predictions);

// One prediction file read back: ids and predictions in the file's order.
struct PredictionFile {
  std::vector<std::string> ids;
  std::vector<double> predictions;
};

// Reads a file in the layout above (what write_prediction_file writes; the
// spaces around "," and before the newline are optional). UserError naming
// the file and line for a missing file, a bad header or a malformed row.
PredictionFile read_prediction_file(const std::filesystem::path& path);

}  // namespace mtbert
