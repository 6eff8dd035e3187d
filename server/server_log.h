#pragma once
// izwi-server's own log on stderr ("izwi-server", info and up): each model's load and one line
// per HTTP request (--no-log-requests turns those off). The engines log apart from it, under
// "izwi" at EngineConfig::log_level.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>

namespace izwi::server {

std::shared_ptr<spdlog::logger> server_log();

/// The process's resident memory in bytes (/proc/self/statm); 0 where it cannot be read.
int64_t resident_bytes();

}  // namespace izwi::server
