#include "engine/request_channel.h"

#include "common/logging.h"

namespace izwi::detail {

RequestChannel::RequestChannel(std::string request_id, Mode mode, Callback callback, int32_t choices)
    : request_id_(std::move(request_id)),
      mode_(mode),
      callback_(std::move(callback)),
      choices_(choices),
      outputs_(static_cast<size_t>(choices)) {}

bool RequestChannel::deliver(StreamChunk chunk) {
  if (mode_ == Mode::Callback) {
    try {
      callback_(chunk);
    } catch (const std::exception& e) {
      logger()->warn("request '{}': stream callback threw: {}; aborting the request", request_id_, e.what());
      return false;
    } catch (...) {
      logger()->warn("request '{}': stream callback threw; aborting the request", request_id_);
      return false;
    }
    return true;
  }
  if (mode_ == Mode::Stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    chunks_.push_back(std::move(chunk));
  }
  return true;
}

bool RequestChannel::on_delta(StreamChunk delta) {
  if (mode_ == Mode::Unary || (delta.tokens.empty() && delta.audio.empty() && delta.audio_codes.empty())) return true;
  delta.request_id = request_id_;
  bool ok = deliver(std::move(delta));
  ready_.notify_all();
  return ok;
}

bool RequestChannel::on_finish(const Output& output, StreamChunk last) {
  last.finish_reason = output.finish_reason;
  last.timings = output.timings;
  last.prefix_cache_hit_tokens = output.prefix_cache_hit_tokens;
  return close(std::move(last), output, std::nullopt);
}

bool RequestChannel::on_error(const Error& error, StreamChunk last) {
  last.finish_reason = FinishReason::Error;
  last.error = error.what();
  last.error_code = error.code();
  return close(std::move(last), std::nullopt, error);
}

bool RequestChannel::close(StreamChunk last, std::optional<Output> output, std::optional<Error> error) {
  bool ok = true;
  if (mode_ != Mode::Unary) {
    last.request_id = request_id_;
    last.finished = true;
    ok = deliver(std::move(last));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (output) outputs_.at(static_cast<size_t>(output->index)) = std::move(*output);
    if (error && !error_) error_ = std::move(error);
    finished_ = ++closed_ == choices_;
  }
  ready_.notify_all();
  return ok;
}

Output RequestChannel::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return finished_; });
  if (error_) throw *error_;
  Output out = outputs_[0];
  if (choices_ > 1) out.choices = outputs_;
  return out;
}

std::optional<StreamChunk> RequestChannel::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return !chunks_.empty() || finals_taken_ == choices_ || finished_; });
  if (chunks_.empty()) return std::nullopt;  // finished and drained
  StreamChunk chunk = std::move(chunks_.front());
  chunks_.pop_front();
  if (chunk.finished) ++finals_taken_;
  return chunk;
}

bool RequestChannel::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

bool RequestChannel::ready() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_ || !chunks_.empty();
}

}  // namespace izwi::detail
