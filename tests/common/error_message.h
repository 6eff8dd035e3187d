#pragma once

#include <functional>
#include <optional>
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

/// The code of the izwi::Error `fn` throws, or std::nullopt if it throws none.
inline std::optional<ErrorCode> error_code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

}  // namespace izwi::testing
