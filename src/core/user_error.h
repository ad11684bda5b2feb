#pragma once
// Errors that a user can cause and fix: a bad config key, a corrupt data row, a
// checkpoint that does not match its config, a wrong CLI argument. The CLI
// prints the message as one line and exits with code 2; everything else (a bug)
// is allowed to be loud.
#include <stdexcept>
#include <string>

namespace mtbert {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& what) : std::runtime_error(what), message_(what) {}
  // The whole message: what() stops at a NUL byte that a user's file put in
  // it, this does not.
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

}  // namespace mtbert
