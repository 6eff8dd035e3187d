#include "server/admission.h"

#include <chrono>

#include "server/api_error.h"

namespace izwi::server {

std::shared_ptr<void> Admission::enter(Pool pool) {
  if (draining_) throw ApiError(503, "the server is shutting down", {}, "shutting_down");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int32_t& held = in_flight_[static_cast<int>(pool)];
    if (held >= max_concurrent_) {
      throw ApiError(429,
                     fmt::format("{} {} are running, the most this server takes (--max-concurrent)", held,
                                 pool == Pool::Http ? "requests" : "live transcriptions"),
                     {}, "rate_limit_exceeded");
    }
    ++held;
  }
  return std::shared_ptr<void>(nullptr, [this, pool](void*) { leave(pool); });
}

void Admission::leave(Pool pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  --in_flight_[static_cast<int>(pool)];
  if (in_flight_[0] + in_flight_[1] == 0) idle_.notify_all();
}

void Admission::start_draining() { draining_ = true; }

bool Admission::wait_idle(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                        [this] { return in_flight_[0] + in_flight_[1] == 0; });
}

int32_t Admission::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_[0] + in_flight_[1];
}

}  // namespace izwi::server
