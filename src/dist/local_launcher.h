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
// did not forward), the launcher stops the others (SIGTERM after a moment for
// them to end on their own; SIGKILL after the grace period) and reports that
// rank in one line.
//
// Bad input is found by every rank at once, so it would be told once per rank
// and, by a rank whose peer has gone, as a broken connection: rank 0 writes
// to this process's stderr, the others through a pipe that passes their
// output on but keeps their "mtbert: error:" line. A rank that exits with 2
// (a user error, already told in one line) is the failure to report, rank 0
// first, and its code is the launcher's; the other ranks' kept error lines
// are dropped (rank 0's own, about a peer that stopped, reaches the terminal
// when only another rank met the bad input).
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace mtbert {

struct LocalLaunchResult {
  int exit_code = 0;   // 0, the forwarded signal's 128 + N, or the failed rank's code
  std::string failure;  // "rank 1 of 2 was killed by signal 9 (Killed)"; empty when none failed
  // The failed rank's own error line (without "mtbert: error: "), when it
  // wrote one through the pipe; rank 0's went to stderr already.
  std::string rank_error;
  // The failed rank exited with 2 and its one line is told: nothing to add.
  bool told = false;
};

LocalLaunchResult run_local_ranks(const std::filesystem::path& executable, const std::vector<std::string>& args,
                                  int nproc, std::chrono::seconds grace);

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_local_port();

}  // namespace mtbert
