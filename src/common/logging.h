#pragma once
// The library's spdlog logger ("izwi"), created on first use.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace izwi {

std::shared_ptr<spdlog::logger> logger();

/// Sets the level from a name (trace, debug, info, warn, error, off); throws on unknown names.
void set_log_level(const std::string& level);

}  // namespace izwi
