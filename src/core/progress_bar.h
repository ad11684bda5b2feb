#pragma once
// Progress of a long loop: a one-line bar with ETA, loss and examples/s that
// redraws itself on a terminal; plain periodic lines (every `interval_seconds`)
// when stderr is a file or a pipe, so that logs stay readable.
#include <chrono>
#include <cstdint>
#include <string>

namespace mtbert {

class Progress {
 public:
  Progress(std::string label, int64_t total, double interval_seconds = 30.0);
  ~Progress();

  // `done` items of `total`; `status` is appended ("loss 0.41  312 ex/s").
  void update(int64_t done, const std::string& status);
  // Ends the bar's line (terminal) or prints a last line.
  void finish(const std::string& status);

 private:
  void draw(int64_t done, const std::string& status, bool final);

  std::string label_;
  int64_t total_;
  double interval_seconds_;
  bool terminal_;
  bool open_line_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace mtbert
