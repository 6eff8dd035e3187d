#include "server/api_error.h"

#include "izwi/errors.h"

namespace izwi::server {

const char* ApiError::type() const {
  switch (status_) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return "service_unavailable_error";
    default:
      return status_ >= 500 ? "server_error" : "invalid_request_error";
  }
}

nlohmann::json ApiError::body() const {
  return {{"error",
           {{"message", what()},
            {"type", type()},
            {"param", param_.empty() ? nlohmann::json(nullptr) : nlohmann::json(param_)},
            {"code", code_.empty() ? nlohmann::json(nullptr) : nlohmann::json(code_)}}}};
}

ApiError from_engine_error(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) {
    switch (error->code()) {
      case ErrorCode::InvalidArgument:
      case ErrorCode::InvalidFormat:
      case ErrorCode::Unsupported:
      case ErrorCode::ResourceExhausted:  // the request can never fit, e.g. max_tokens past the context
        return ApiError(400, error->what(), {}, "invalid_request");
      case ErrorCode::Aborted:
        return ApiError(503, error->what(), {}, "shutting_down");
      default:
        break;
    }
  }
  return ApiError(500, e.what(), {}, "internal_error");
}

}  // namespace izwi::server
