#include "server/admission.h"

#include <chrono>

#include "server/api_error.h"

namespace izwi::server {

std::shared_ptr<void> Admission::enter() {
  if (draining_) throw ApiError(503, "the server is shutting down", {}, "shutting_down");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (in_flight_ >= max_concurrent_) {
      throw ApiError(429,
                     fmt::format("{} requests are running, the most this server takes (--max-concurrent)", in_flight_),
                     {}, "rate_limit_exceeded");
    }
    ++in_flight_;
  }
  return std::shared_ptr<void>(nullptr, [this](void*) { leave(); });
}

void Admission::leave() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--in_flight_ == 0) idle_.notify_all();
}

void Admission::start_draining() { draining_ = true; }

bool Admission::wait_idle(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [this] { return in_flight_ == 0; });
}

int32_t Admission::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

}  // namespace izwi::server
