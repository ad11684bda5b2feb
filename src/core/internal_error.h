#pragma once
// Errors only a bug can cause: an invariant that mtbert's own code keeps
// broke (an enum value that no switch knows, sizes that one part of the
// program hands another after the config or the data layer checked them).
// The CLI prints "mtbert: internal error: ..." and exits with code 1.
//
// mtbert has one other kind: UserError (user_error.h), for everything a user
// can cause and fix (config, data rows, checkpoints, CLI arguments), printed
// as one line with exit code 2. The custom operators (src/ops) check their
// arguments with TORCH_CHECK, as PyTorch's own operators do, since Python
// reaches them directly (torch.ops.mtbert).
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace mtbert {

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Throws InternalError with the formatted message unless `holds`.
template <typename... Args>
void check_invariant(bool holds, fmt::format_string<Args...> format, Args&&... args) {
  if (!holds) throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace mtbert
