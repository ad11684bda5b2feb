#pragma once
// A rank that mtbert's own --nproc launcher started (dist/local_launcher.h)
// ends with its launcher, however the launcher ends: SIGKILL and the
// out-of-memory killer included, which give it no chance to pass a signal
// on. Without this the ranks, re-parented, would train on, holding cores and
// GPUs that nobody waits for and writing into the run folder.
#include <sys/types.h>

namespace mtbert {

// The variable through which the launcher names itself to its ranks.
inline constexpr const char* kLauncherPidVariable = "MTBERT_LAUNCHER_PID";

// When this process is a rank of the launcher named in MTBERT_LAUNCHER_PID,
// asks the kernel for SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG:
// before training starts that ends the rank at once; once it trains, the
// rank saves a checkpoint at the end of its step and stops, as on any
// SIGTERM), and sends itself SIGTERM when the launcher is already gone (it
// may die between the spawn and this call). The variable is removed, so
// that processes this one starts do not take it for theirs. Linux only;
// elsewhere it does nothing.
void follow_launcher();

}  // namespace mtbert
