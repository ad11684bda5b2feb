#include "config/env_expansion.h"

#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "core/user_error.h"

namespace mtbert {

std::optional<std::string> process_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

namespace {

bool valid_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

void expand_tree(ConfigNode& node, const std::string& path, const EnvLookup& lookup) {
  switch (node.kind) {
    case ConfigNode::Kind::scalar:
      try {
        node.text = expand_env(node.text, lookup);
      } catch (const UserError& e) {
        throw UserError(fmt::format("{}: {}: {}", node.origin.describe(), path, e.what()));
      }
      break;
    case ConfigNode::Kind::sequence:
      for (size_t i = 0; i < node.items.size(); ++i)
        expand_tree(node.items[i], fmt::format("{}[{}]", path, i), lookup);
      break;
    case ConfigNode::Kind::map:
      for (auto& [key, value] : node.entries) expand_tree(value, path.empty() ? key : path + "." + key, lookup);
      break;
    case ConfigNode::Kind::null:
      break;
  }
}

}  // namespace

std::string expand_env(std::string_view text, const EnvLookup& lookup) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 == text.size()) {
      out += text[i++];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (text[i + 1] != '{') {
      out += text[i++];
      continue;
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos)
      throw UserError(fmt::format("\"{}\" has an unterminated ${{ (write $$ for a literal $)", text));
    const std::string_view body = text.substr(i + 2, close - i - 2);
    const size_t dash = body.find(":-");
    const std::string name(body.substr(0, dash));
    if (!valid_name(name))
      throw UserError(fmt::format("\"${{{}}}\" is not a variable reference: write ${{NAME}} or ${{NAME:-default}} "
                                  "(letters, digits, _), or $$ for a literal $",
                                  body));
    const auto value = lookup(name);
    if (dash != std::string_view::npos && (!value || value->empty())) {
      out += body.substr(dash + 2);
    } else if (value) {
      out += *value;
    } else {
      throw UserError(fmt::format("environment variable {} is not set: set it, or give a default as ${{{}:-default}}",
                                  name, name));
    }
    i = close + 1;
  }
  return out;
}

void expand_env_in_tree(ConfigNode& root, const EnvLookup& lookup) { expand_tree(root, "", lookup); }

}  // namespace mtbert
