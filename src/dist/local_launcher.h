#pragma once
// `mtbert train --nproc N`: runs N ranks of a data-parallel job on this
// machine, as torchrun would. Each child is `executable args...` with RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and
// MASTER_PORT (a free port) added to this process's environment (and
// OMP_NUM_THREADS, its share of the cores, where the user did not set it), in its own
// process group (a terminal's Ctrl-C reaches only the launcher, which passes
// SIGINT or SIGTERM on exactly once to every rank: they save a checkpoint and
// stop together).
//
// When a rank fails (exits non-zero, or is killed by a signal the launcher
// did not forward), the launcher gives the others a moment to end on their
// own, then stops them (SIGTERM; SIGKILL after the grace period) and reports
// one rank in one line: the one that failed for a reason of its own, not
// one that only lost its peer.
//
// Each rank's stderr (descriptor 2) is its log file, so that what its
// libraries print there (Gloo's INFO lines on newer LibTorch, LibTorch's
// warnings) stays out of the terminal; mtbert's own output reaches the
// terminal on another descriptor, and a failing rank leaves its error line
// in its error file (dist/rank_files.h), where the launcher reads it. Bad
// input is found by every rank at once: a rank that exits with 2 (a user
// error, said in one line) is the failure to report, rank 0 first, with its
// line and code; the others' lines are dropped. The logs and error files
// live in MTBERT_RANK_LOGS when set (kept), else in a temporary folder,
// removed unless a rank failed in a way its one line does not tell.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace mtbert {

struct LocalLaunchResult {
  int exit_code = 0;   // 0, the forwarded signal's 128 + N, or the failed rank's code
  std::string failure;  // "rank 1 of 2 was killed by signal 9 (Killed)"; empty when none failed
  // The failed rank's own error line (without "mtbert: error: "), when it
  // left one.
  std::string rank_error;
  // The failed rank exited with 2 and left its one line: nothing to add.
  bool told = false;
  // The folder of the ranks' logs, kept for a failure that is not told.
  std::filesystem::path logs;
};

LocalLaunchResult run_local_ranks(const std::filesystem::path& executable, const std::vector<std::string>& args,
                                  int nproc, std::chrono::seconds grace);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace mtbert
