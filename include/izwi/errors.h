#pragma once
/// @file errors.h
/// Typed errors thrown by the izwi public API.

#include <stdexcept>
#include <string>

#include "izwi/export.h"

namespace izwi {

/// What went wrong, coarse enough to branch on.
enum class ErrorCode {
  InvalidArgument,    ///< A request or config field is out of range or malformed.
  NotFound,           ///< A file, tensor, request id or model type does not exist.
  Unsupported,        ///< Valid input the engine cannot handle (e.g. an unknown rope_type).
  InvalidFormat,      ///< A file exists but its contents are malformed or inconsistent.
  ResourceExhausted,  ///< The request can never fit (e.g. more KV blocks than the pool has).
  Aborted,            ///< The request was aborted or the engine shut down.
  Internal,           ///< A bug or an unexpected failure inside the engine.
};

/// Name of an error code, e.g. "InvalidArgument".
IZWI_API const char* to_string(ErrorCode code) noexcept;

/// Exception carrying an ErrorCode; what() names the offending file, field or tensor.
class IZWI_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);  ///< `message` becomes what().
  ErrorCode code() const noexcept { return code_; }   ///< The kind of error.

 private:
  ErrorCode code_;
};

}  // namespace izwi
