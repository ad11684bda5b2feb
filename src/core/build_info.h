#pragma once
// Facts about this build, recorded in every run's summary.json.
#include <string>

namespace mtbert {

// `git describe`-style revision of the source tree when mtbert was built
// ("<sha>" or "<sha>-dirty"), or "unknown" outside a git checkout.
std::string git_revision();

}  // namespace mtbert
