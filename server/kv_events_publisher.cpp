#include "server/kv_events_publisher.h"

#include <zmq.h>

#include <array>
#include <cerrno>
#include <utility>

#include "common/check.h"
#include "server/kv_events_wire.h"

namespace izwi::server {

namespace {

// vLLM's rule (bind stable, connect volatile): bind wildcards and local transports, else connect.
bool binds(const std::string& endpoint) {
  return endpoint.find('*') != std::string::npos || endpoint.find("::") != std::string::npos ||
         endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0;
}

constexpr int kHighWaterMark = 100000;  // messages queued per subscriber, vLLM's default
constexpr int kLingerMs = 1000;         // on close, queued messages get this long to go out

}  // namespace

KvEventsPublisher::KvEventsPublisher(std::string endpoint) : endpoint_(std::move(endpoint)) {
  const bool bind = binds(endpoint_);
  context_ = zmq_ctx_new();
  socket_ = context_ == nullptr ? nullptr : zmq_socket(context_, ZMQ_PUB);
  bool ok = socket_ != nullptr && zmq_setsockopt(socket_, ZMQ_SNDHWM, &kHighWaterMark, sizeof(kHighWaterMark)) == 0 &&
            zmq_setsockopt(socket_, ZMQ_LINGER, &kLingerMs, sizeof(kLingerMs)) == 0;
  if (ok) ok = (bind ? zmq_bind(socket_, endpoint_.c_str()) : zmq_connect(socket_, endpoint_.c_str())) == 0;
  std::array<char, 256> resolved{};
  size_t size = resolved.size();
  if (ok) ok = zmq_getsockopt(socket_, ZMQ_LAST_ENDPOINT, resolved.data(), &size) == 0;
  if (!ok) {
    const int error = zmq_errno();
    close();  // the destructor does not run for a constructor that throws
    fail(ErrorCode::InvalidArgument, "KV events: cannot {} a ZeroMQ PUB socket to '{}': {}", bind ? "bind" : "connect",
         endpoint_, zmq_strerror(error));
  }
  endpoint_ = resolved.data();
}

KvEventsPublisher::~KvEventsPublisher() { close(); }

void KvEventsPublisher::close() {
  if (socket_ != nullptr) zmq_close(socket_);
  if (context_ != nullptr) zmq_ctx_term(context_);
  socket_ = context_ = nullptr;
}

void KvEventsPublisher::publish(const std::string& topic, const KvEventBatch& batch) {
  const std::string payload = encode_kv_event_batch(batch);
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t& next = sequences_[topic];
  std::array<unsigned char, 8> sequence{};
  for (size_t i = 0; i < sequence.size(); ++i) sequence[i] = static_cast<unsigned char>(next >> (56 - 8 * i));
  ++next;  // a message dropped below counts too: subscribers see the gap
  // A PUB socket drops rather than blocks at the high-water mark; ZMQ_DONTWAIT makes sure of it.
  const bool sent = zmq_send(socket_, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
                    zmq_send(socket_, sequence.data(), sequence.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
                    zmq_send(socket_, payload.data(), payload.size(), ZMQ_DONTWAIT) >= 0;
  if (!sent && zmq_errno() != EAGAIN) {
    fail(ErrorCode::Internal, "KV events: sending on '{}' failed: {}", endpoint_, zmq_strerror(zmq_errno()));
  }
}

uint64_t KvEventsPublisher::next_sequence(const std::string& topic) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = sequences_.find(topic);
  return it == sequences_.end() ? 0 : it->second;
}

}  // namespace izwi::server
