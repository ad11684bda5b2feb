#pragma once
// Durations as people read them, the same in progress bars, sweep lines and
// run tables.
#include <string>

namespace mtbert {

// "1:02:03" (hours), "4:05" (minutes and seconds).
std::string format_duration(double seconds);

// Seconds on the steady clock: differences of two readings time an interval.
double steady_seconds();

}  // namespace mtbert
