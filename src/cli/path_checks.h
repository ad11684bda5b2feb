#pragma once
// Paths given on the command line, checked for what the option needs (an
// existing folder, file or model folder), and when they are not, what they
// really are: absent, a file, a link that leads nowhere or in a loop, or a
// run folder where a model folder is wanted. CLI11's own checks say
// "Directory does not exist" for all of these.
#include <string>

#include <CLI/CLI.hpp>

namespace mtbert::cli {

// An existing folder (a run folder, --resume), or an existing file.
CLI::Validator existing_folder();
CLI::Validator existing_file();

// A model folder (config.json, model.safetensors): a run folder given
// instead is named as such, with where its model folder is, if it has one.
CLI::Validator model_folder();

}  // namespace mtbert::cli
