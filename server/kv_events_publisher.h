#pragma once
// Publishes the engine's KV events over ZeroMQ as vLLM's ZmqEventPublisher does, so the llm-d
// KV-cache indexer (or anything reading vLLM's events) tracks which pod caches which prefix:
// every batch is one 3-frame message [topic, 8-byte big-endian sequence number, msgpack payload]
// on a PUB socket (docs/kv_events.md). One socket serves every engine of a server, each engine
// under its own topic with its own sequence. Hook it to an engine with
//   engine.set_kv_event_listener([&](const KvEventBatch& b) { publisher.publish(topic, b); });
// keeping the publisher alive until the engine is shut down (shutdown publishes a last batch).

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "izwi/kv_events.h"

namespace izwi::server {

class KvEventsPublisher {
 public:
  /// `endpoint` as vLLM takes it: one with a wildcard host or port ("tcp://*:5557",
  /// "tcp://127.0.0.1:*", "tcp://[::]:5557") or an ipc:// / inproc:// one is bound; any other
  /// ("tcp://indexer:5557", where the indexer binds) is connected to. Throws izwi::Error naming
  /// the endpoint when the socket cannot be bound or connected.
  explicit KvEventsPublisher(std::string endpoint);
  ~KvEventsPublisher();
  KvEventsPublisher(const KvEventsPublisher&) = delete;
  KvEventsPublisher& operator=(const KvEventsPublisher&) = delete;

  /// Sends one batch under `topic`, the first frame of the message (the llm-d indexer expects
  /// "kv@<pod>@<model>"). Thread-safe and never waits (engine workers call it): past the
  /// high-water mark a slow subscriber loses messages, and sees the gap in the topic's sequence.
  void publish(const std::string& topic, const KvEventBatch& batch);

  /// The endpoint bound or connected to, a wildcard port resolved ("tcp://127.0.0.1:41234").
  const std::string& endpoint() const { return endpoint_; }
  /// The sequence number the next message under `topic` carries; the first is 0, as with vLLM.
  uint64_t next_sequence(const std::string& topic) const;

 private:
  void close();

  std::string endpoint_;
  void* context_ = nullptr;
  void* socket_ = nullptr;
  mutable std::mutex mutex_;                   ///< ZeroMQ sockets are not thread-safe; also orders the sequences.
  std::map<std::string, uint64_t> sequences_;  ///< by topic
};

}  // namespace izwi::server
