#pragma once
// Checks shared by the commands that start runs (train, pretrain).
#include <string>

#include "train/run_directory.h"

namespace mtbert::cli {

// UserError unless `run` may receive a new run: it does not exist, holds only
// a train.log, or holds a run that failed. An unfinished run names
// `mtbert <command> --resume`.
void check_fresh_run_folder(const RunDirectory& run, const std::string& command);

}  // namespace mtbert::cli
