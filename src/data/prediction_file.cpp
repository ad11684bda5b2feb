#include "data/prediction_file.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "core/atomic_file.h"
#include "core/internal_error.h"
#include "core/user_error.h"

namespace mtbert {

namespace {

// Python's str() of a numpy float32 (numpy's Dragon4 in "unique" mode):
// the shortest decimal digits that round-trip through float32, which is what
// std::to_chars gives, laid out the way numpy lays them out.
std::string numpy_float32_str(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(result.ptr - buf));  // "-1.2345e-07"
  const bool negative = sci.front() == '-';
  const std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(sci.substr(e + 1)).c_str());

  std::string out = negative ? "-" : "";
  // numpy compares the float32 widened to double against these bounds, so
  // float32(1e-4) = 9.99999974e-05 is written in scientific notation.
  const double magnitude = std::fabs(static_cast<double>(f));
  if (f == 0.0f || (magnitude >= 1e-4 && magnitude < 1e16)) {
    if (exponent >= 0) {
      const std::size_t int_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= int_digits) {
        out += digits + std::string(int_digits - digits.size(), '0') + ".0";
      } else {
        out += digits.substr(0, int_digits) + "." + digits.substr(int_digits);
      }
    } else {
      out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  return out + fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
}

}  // namespace

std::string prediction_file_name(std::string_view task, std::string_view split) {
  return fmt::format("{}-{}-output.csv", task, split);
}

std::string format_prediction(const TaskSpec& task, double value) {
  switch (task.prediction_format) {
    case PredictionFormat::integer:
      return std::to_string(std::llround(value));
    case PredictionFormat::float32:
      return numpy_float32_str(static_cast<float>(value));
  }
  throw InternalError("format_prediction: unknown format");
}

std::string prediction_file_contents(const TaskSpec& task, const std::vector<std::string>& ids,
                                     const std::vector<double>& predictions) {
  check_invariant(ids.size() == predictions.size(), "prediction file of task {}: {} ids for {} predictions", task.name,
                  ids.size(), predictions.size());
  std::string out = fmt::format("id \t {} \n", task.prediction_column);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += ids[i];
    out += " , ";
    out += format_prediction(task, predictions[i]);
    out += " \n";
  }
  return out;
}

void write_prediction_file(const std::filesystem::path& path, const TaskSpec& task,
                           const std::vector<std::string>& ids, const std::vector<double>& predictions) {
  write_text_atomically(path, prediction_file_contents(task, ids, predictions));
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

PredictionFile read_prediction_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot read the prediction file", path.string()));
  PredictionFile file;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (trimmed(line).rfind("id", 0) != 0)
        throw UserError(fmt::format("{}:1: expected the header \"id \\t <column>\", got \"{}\"", path.string(), line));
      continue;
    }
    if (trimmed(line).empty()) continue;
    const std::size_t comma = line.rfind(',');
    if (comma == std::string::npos)
      throw UserError(fmt::format("{}:{}: expected \"<id> , <prediction>\", got \"{}\"", path.string(), number, line));
    const std::string_view id = trimmed(std::string_view(line).substr(0, comma));
    const std::string value(trimmed(std::string_view(line).substr(comma + 1)));
    char* end = nullptr;
    const double prediction = std::strtod(value.c_str(), &end);
    if (id.empty() || value.empty() || *end != '\0')
      throw UserError(fmt::format("{}:{}: expected \"<id> , <prediction>\", got \"{}\"", path.string(), number, line));
    file.ids.emplace_back(id);
    file.predictions.push_back(prediction);
  }
  if (number == 0) throw UserError(fmt::format("{}: empty prediction file (no header)", path.string()));
  return file;
}

}  // namespace mtbert
