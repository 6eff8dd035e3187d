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

  /// `choices` (GenerationParams::n) requests share the channel; it ends when each has finished.
  RequestChannel(std::string request_id, Mode mode, Callback callback = {}, int32_t choices = 1);

  const std::string& request_id() const { return request_id_; }

  // Worker side. `delta` holds what is new since the previous chunk (tokens, text, audio, codes)
  // of the choice delta.index. Each returns false if a callback threw (the choice should be aborted).
  bool on_delta(StreamChunk delta);
  bool on_finish(const Output& output, StreamChunk delta);
  bool on_error(const Error& error, StreamChunk delta);
  /// Unary requests get their whole result from the Output; streams get it chunk by chunk.
  bool streams() const { return mode_ != Mode::Unary; }

  // Caller side.
  /// Blocks until every choice has ended; rethrows a failure as izwi::Error. With several choices
  /// the Output is choice 0's with all of them in Output::choices.
  Output wait();
  /// Blocks for the next chunk; std::nullopt after the finished chunk was returned.
  std::optional<StreamChunk> next();
  bool finished() const;
  /// next() would return at once (a chunk is queued or the request ended).
  bool ready() const;

 private:
  bool deliver(StreamChunk chunk);
  /// Delivers a choice's last chunk (streams); once every choice is done, resolves wait() with
  /// the outputs or the first error.
  bool close(StreamChunk last, std::optional<Output> output, std::optional<Error> error);

  const std::string request_id_;
  const Mode mode_;
  Callback callback_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<StreamChunk> chunks_;
  const int32_t choices_;
  int32_t closed_ = 0;        ///< Choices that have ended.
  int32_t finals_taken_ = 0;  ///< Finished chunks next() has returned.
  bool finished_ = false;     ///< Every choice has ended.
  std::vector<Output> outputs_;
  std::optional<Error> error_;
};

}  // namespace izwi::detail
