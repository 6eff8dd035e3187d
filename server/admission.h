#pragma once
// Which requests may start: at most `max_concurrent` engine requests at once (429 beyond), none
// once the server is draining for shutdown (503). Live-transcription items have a pool of their
// own of the same size: a client may keep one open (and idle) for minutes, which must not turn
// HTTP requests away.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace izwi::server {

class Admission {
 public:
  enum class Pool { Http, Realtime };
  explicit Admission(int32_t max_concurrent) : max_concurrent_(max_concurrent) {}
  /// A slot of `pool` held until the returned ticket is destroyed; throws ApiError 429 or 503.
  std::shared_ptr<void> enter(Pool pool = Pool::Http);
  /// From now on every enter() is refused with 503.
  void start_draining();
  bool draining() const { return draining_; }
  /// Waits until no slot (of either pool) is held or `timeout_ms` passed; true when none is held.
  bool wait_idle(int64_t timeout_ms);
  /// Slots held, both pools.
  int32_t in_flight() const;

 private:
  void leave(Pool pool);
  const int32_t max_concurrent_;
  std::atomic<bool> draining_{false};
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  int32_t in_flight_[2] = {0, 0};  ///< by Pool
};

}  // namespace izwi::server
