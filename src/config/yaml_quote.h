#pragma once
// A string as a YAML double-quoted scalar, for the YAML files mtbert writes
// (config.resolved.yaml, the overrides a sweep hands to its runs).
#include <string>

namespace mtbert {

enum class Dollars {
  keep,    // "${VAR}" is still expanded when the file is read (sweep overrides)
  escape,  // "$$": the value is final, already expanded (config.resolved.yaml)
};

std::string yaml_double_quoted(const std::string& text, Dollars dollars);

}  // namespace mtbert
