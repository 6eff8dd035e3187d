#include "common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

#include "common/check.h"

namespace izwi {

std::shared_ptr<spdlog::logger> logger() {
  static std::once_flag once;
  static std::shared_ptr<spdlog::logger> instance;
  std::call_once(once, [] {
    instance = spdlog::get("izwi");
    if (!instance) {
      instance = spdlog::stderr_color_mt("izwi");
      instance->set_level(spdlog::level::warn);
    }
  });
  return instance;
}

void set_log_level(const std::string& level) {
  auto parsed = spdlog::level::from_str(level);
  // from_str maps unknown names to "off"; only accept "off" when it was asked for.
  if (parsed == spdlog::level::off && level != "off") {
    fail(ErrorCode::InvalidArgument, "log_level '{}' is not one of trace, debug, info, warn, error, off", level);
  }
  logger()->set_level(parsed);
}

}  // namespace izwi
