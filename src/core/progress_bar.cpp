#include "core/progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/console.h"
#include "core/duration.h"

namespace mtbert {

Progress::Progress(std::string label, int64_t total, double interval_seconds)
    : label_(std::move(label)),
      total_(total),
      interval_seconds_(interval_seconds),
      terminal_(::isatty(::fileno(console())) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (open_line_) std::fputc('\n', console());
}

void Progress::update(int64_t done, const std::string& status) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  // A terminal redraws a few times a second at most; a log file gets a line
  // per interval.
  if (since < (terminal_ ? 0.2 : interval_seconds_)) return;
  last_draw_ = now;
  draw(done, status, false);
}

void Progress::finish(const std::string& status) { draw(total_, status, true); }

void Progress::draw(int64_t done, const std::string& status, bool final) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double fraction = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const std::string eta =
      fraction > 0 && !final ? "ETA " + format_duration(elapsed * (1 - fraction) / fraction) : format_duration(elapsed);
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    std::fprintf(console(), "\r\033[K%s [%s] %3.0f%% %lld/%lld %s  %s", label_.c_str(), bar.c_str(), 100 * fraction,
                 static_cast<long long>(done), static_cast<long long>(total_), eta.c_str(), status.c_str());
    open_line_ = !final;
    if (final) std::fputc('\n', console());
  } else {
    std::fprintf(console(), "%s %lld/%lld (%.0f%%) %s  %s\n", label_.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total_), 100 * fraction, eta.c_str(), status.c_str());
  }
  std::fflush(console());
}

}  // namespace mtbert
