#pragma once
// Internal invariant checks. A failed check is a bug in izwi, reported as ErrorCode::Internal
// so the worker thread can fail the affected requests instead of crashing the host program.

#include <fmt/format.h>

#include "izwi/errors.h"

#define IZWI_CHECK(cond, ...)                                                                                       \
  do {                                                                                                              \
    if (!(cond)) {                                                                                                  \
      throw ::izwi::Error(::izwi::ErrorCode::Internal, ::fmt::format("{}:{}: check '{}' failed: {}", __FILE__,      \
                                                                     __LINE__, #cond, ::fmt::format(__VA_ARGS__))); \
    }                                                                                                               \
  } while (0)

namespace izwi {

/// Throws izwi::Error(code, fmt::format(...)).
template <typename... Args>
[[noreturn]] void fail(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace izwi
