#include "server/server_log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <fstream>
#include <mutex>

namespace izwi::server {

std::shared_ptr<spdlog::logger> server_log() {
  static std::once_flag once;
  static std::shared_ptr<spdlog::logger> instance;
  std::call_once(once, [] {
    instance = spdlog::get("izwi-server");
    if (!instance) instance = spdlog::stderr_color_mt("izwi-server");
    instance->set_level(spdlog::level::info);
    instance->flush_on(spdlog::level::info);  // a log reader (or a test) sees each line at once
  });
  return instance;
}

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace izwi::server
