#include "server/server_options.h"

#include "common/check.h"

namespace izwi::server {

std::pair<std::string, std::string> parse_model_spec(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    fail(ErrorCode::InvalidArgument, "--model '{}' must be NAME=DIR", spec);
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

}  // namespace izwi::server
