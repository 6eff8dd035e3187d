#include "izwi/errors.h"

#include "izwi/output.h"

namespace izwi {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument:
      return "InvalidArgument";
    case ErrorCode::NotFound:
      return "NotFound";
    case ErrorCode::Unsupported:
      return "Unsupported";
    case ErrorCode::InvalidFormat:
      return "InvalidFormat";
    case ErrorCode::ResourceExhausted:
      return "ResourceExhausted";
    case ErrorCode::Aborted:
      return "Aborted";
    case ErrorCode::Internal:
      return "Internal";
  }
  return "Unknown";
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

const char* to_string(FinishReason reason) noexcept {
  switch (reason) {
    case FinishReason::None:
      return "none";
    case FinishReason::Eos:
      return "eos";
    case FinishReason::Length:
      return "length";
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Abort:
      return "abort";
    case FinishReason::Error:
      return "error";
  }
  return "unknown";
}

}  // namespace izwi
