#pragma once

#include <functional>
#include <string>

#include "izwi/errors.h"

namespace izwi::testing {

/// The message of the izwi::Error `fn` throws, or "" if it throws none.
inline std::string error_message(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace izwi::testing
