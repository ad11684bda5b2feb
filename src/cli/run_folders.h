#pragma once
// What the commands that start or resume runs (train, pretrain) share: their
// positional arguments, and the checks and clean-up around a run folder.
#include <functional>
#include <string>
#include <vector>

#include "train/run_directory.h"
#include "train/run_status.h"

namespace mtbert::cli {

// CONFIG.yaml and the key.path=value overrides among a command's positional
// arguments (UserError for a second file).
struct ConfigArguments {
  std::string path;
  std::vector<std::string> overrides;
};
ConfigArguments split_config_arguments(const std::vector<std::string>& positional);

// The config a run resumes with (its config.resolved.yaml) against the copy
// its last checkpoint holds: a change (the file edited since) would make the
// resumed run another run than the one checkpointed. UserError naming the
// key and both values, unless `force`, which logs each change instead. The
// run's name, tags, output_dir, threads and distributed.timeout_seconds may
// change freely. `canonical` gives a resolved config file in its canonical
// form (1e-3 and 0.001 alike). A checkpoint without the copy (written by an
// older mtbert) is not checked.
void check_resume_config(const RunDirectory& run, bool force,
                         const std::function<std::string(const std::filesystem::path&)>& canonical);

// The folder of a new run: `out` (--out) when given, else the config's
// output_dir; when that already holds a finished run, the first of
// output_dir-2, output_dir-3, ... that does not (logged), so that running an
// experiment again makes a new run rather than an error. Every rank of a job
// picks the same folder: the one that rank 0 creates holds no finished run.
RunDirectory new_run_folder(const std::string& out, const std::string& output_dir);

// Runs `start` in the folder `run`, checked fresh, created, locked and
// checked again under the lock (another process may have trained a run there
// meanwhile); when it throws before the run's first checkpoint, nothing it
// wrote stays behind.
void in_fresh_run_folder(const RunDirectory& run, const std::string& command, const std::function<void()>& start);

}  // namespace mtbert::cli
