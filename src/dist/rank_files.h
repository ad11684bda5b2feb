#pragma once
// What mtbert's --nproc launcher (dist/local_launcher.h) and each of its
// ranks share besides the job's variables, as torchrun does: per rank, a log
// file that is the rank's stderr (descriptor 2: whatever its libraries write
// there, Gloo's INFO lines and LibTorch's warnings, chatter that would
// otherwise reach the user's terminal once per rank), the terminal on
// another descriptor for mtbert's own output (core/console.h), and an error
// file in which a failing rank leaves its one error line and its kind, for
// the launcher to read instead of the rank's stderr.
#include <filesystem>
#include <optional>
#include <string>

namespace mtbert {

// The variables through which the launcher names a rank's console
// descriptor and its error file.
inline constexpr const char* kRankConsoleVariable = "MTBERT_RANK_CONSOLE_FD";
inline constexpr const char* kRankErrorVariable = "MTBERT_RANK_ERROR_FILE";
// The descriptor the launcher gives each rank its console on.
inline constexpr int kRankConsoleFd = 3;

// Why a rank ended in error: bad input (told in one line, exit 2), a peer
// that is gone or hung (a consequence of another rank's end, not a cause),
// or anything else (a bug, an allocation that failed).
enum class RankErrorKind { user, peer, internal };

struct RankError {
  RankErrorKind kind = RankErrorKind::internal;
  std::string line;  // as the rank would have printed it: "mtbert: error: ..."
};

// In a rank of the launcher: writes mtbert's own output to the console
// descriptor it was given, and keeps its error file for leave_rank_error.
// Both variables are removed, so that processes this one starts do not take
// them for theirs. Does nothing elsewhere.
void use_rank_files();

// Writes `error` to this rank's error file (atomically: the launcher never
// reads half of it); false when this process has none, or it cannot be
// written: then the caller prints the line itself.
bool leave_rank_error(const RankError& error);

// A rank's error file, when it left one.
std::optional<RankError> read_rank_error(const std::filesystem::path& file);

}  // namespace mtbert
