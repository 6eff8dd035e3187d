#pragma once
// Delivery of one request's results from the worker thread to its caller: whole (generate),
// as a queue of chunks (StreamHandle::next), or through a callback on the worker thread.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "izwi/errors.h"
#include "izwi/output.h"

namespace izwi::detail {

class RequestChannel {
 public:
  enum class Mode { Unary, Stream, Callback };
  using Callback = std::function<void(const StreamChunk&)>;

  RequestChannel(std::string request_id, Mode mode, Callback callback = {});

  const std::string& request_id() const { return request_id_; }

  // Worker side. `delta` holds what is new since the previous chunk (tokens, text, audio, codes).
  // Each returns false if a callback threw (the request should be aborted).
  bool on_delta(StreamChunk delta);
  bool on_finish(const Output& output, StreamChunk delta);
  bool on_error(const Error& error, StreamChunk delta);
  /// Unary requests get their whole result from the Output; streams get it chunk by chunk.
  bool streams() const { return mode_ != Mode::Unary; }

  // Caller side.
  /// Blocks until the request ends; rethrows a failure as izwi::Error.
  Output wait();
  /// Blocks for the next chunk; std::nullopt after the finished chunk was returned.
  std::optional<StreamChunk> next();
  bool finished() const;
  /// next() would return at once (a chunk is queued or the request ended).
  bool ready() const;

 private:
  bool deliver(StreamChunk chunk);
  /// Delivers the last chunk (streams) and resolves wait() with `output` or `error`.
  bool close(StreamChunk last, std::optional<Output> output, std::optional<Error> error);

  const std::string request_id_;
  const Mode mode_;
  Callback callback_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<StreamChunk> chunks_;
  bool finished_ = false;
  bool final_taken_ = false;
  std::optional<Output> output_;
  std::optional<Error> error_;
};

}  // namespace izwi::detail
