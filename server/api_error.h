#pragma once
// Errors the server answers with: an HTTP status and OpenAI's error object
// {"error": {"message", "type", "param", "code"}}.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

namespace izwi::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string code = {})
      : std::runtime_error(std::move(message)), status_(status), param_(std::move(param)), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  /// OpenAI's error type for the status: invalid_request_error, authentication_error, ...
  const char* type() const;
  nlohmann::json body() const;

 private:
  int status_;
  std::string param_;
  std::string code_;
};

/// 400 naming the request parameter at fault.
template <typename... Args>
[[noreturn]] void bad_param(const std::string& param, fmt::format_string<Args...> format, Args&&... args) {
  throw ApiError(400, fmt::format(format, std::forward<Args>(args)...), param, "invalid_value");
}

/// The ApiError an izwi::Error thrown while a request is prepared or submitted becomes: bad input
/// is the client's (400), anything else the server's (500).
ApiError from_engine_error(const std::exception& e);

}  // namespace izwi::server
