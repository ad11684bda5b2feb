#pragma once
// What a call refuses: the one-line message of the UserError it throws, or
// "(no error)" when it returns, for tests that compare the messages of bad
// input.
#include <string>
#include <utility>

#include "core/user_error.h"

namespace mtbert::test {

template <class Call>
std::string user_error_of(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const mtbert::UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace mtbert::test
