#pragma once
// The reference page of every config key (docs/config-reference.md), written
// from the schema itself: the describe() functions of experiment_config.h and
// pretrain_config.h give each key's path, type, default, constraints and Doc,
// so the page cannot drift from what the reader accepts (a test compares the
// committed page with this function's output).
#include <string>

namespace mtbert {

// The whole page, as Markdown.
std::string config_reference_markdown();

}  // namespace mtbert
