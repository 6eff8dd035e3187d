#pragma once
/// @file stream_handle.h
/// The handle of a streamed request: text generation, transcription and speech synthesis all
/// deliver their chunks through it.

#include <memory>
#include <optional>
#include <string>

#include "izwi/export.h"
#include "izwi/output.h"

namespace izwi {

namespace detail {
class EngineImpl;
class RequestChannel;
}  // namespace detail

/// A streamed request. next() blocks until the next chunk; destroying an unfinished handle
/// aborts the request. Movable, not copyable; safe to use from one thread at a time.
class IZWI_API StreamHandle {
 public:
  StreamHandle() = default;
  StreamHandle(StreamHandle&&) noexcept;             ///< Takes over the request.
  StreamHandle& operator=(StreamHandle&&) noexcept;  ///< Aborts this handle's unfinished request first.
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  ~StreamHandle();

  /// The request id (assigned by the engine if the request had none).
  const std::string& id() const;
  /// Blocks for the next chunk; std::nullopt once the finished chunk has been returned.
  /// Inside a stream callback of the same engine it throws InvalidArgument when it would block
  /// (the worker that produces the chunk is the thread running the callback).
  std::optional<StreamChunk> next();
  /// Asks the engine to abort; the stream then ends with FinishReason::Abort. Idempotent.
  void abort();

 private:
  friend class Engine;
  StreamHandle(std::shared_ptr<detail::RequestChannel> channel, std::weak_ptr<detail::EngineImpl> engine);
  std::shared_ptr<detail::RequestChannel> channel_;
  std::weak_ptr<detail::EngineImpl> engine_;
};

}  // namespace izwi
