#include "audio/streaming_log_mel.h"

#include <algorithm>

#include "audio/sample_checks.h"
#include "common/check.h"

namespace izwi {

StreamingLogMel::StreamingLogMel(const LogMelConfig& config, const at::Device& device) : frames_(config, device) {}

at::Tensor StreamingLogMel::push(const float* samples, size_t count) {
  if (finished_) fail(ErrorCode::InvalidArgument, "StreamingLogMel::push after finish");
  check_samples(samples, count, "StreamingLogMel::push", EmptySamples::Allow);
  padded_.insert(padded_.end(), samples, samples + count);
  received_ += static_cast<int64_t>(count);
  const int64_t half = frames_.config().n_fft / 2;
  if (!start_padded_) {
    if (received_ <= half) return take_frames(0);
    // Centred STFT: the first frames see x[half], ..., x[1] before x[0] (reflection without the edge).
    std::vector<float> reflection(padded_.rend() - half - 1, padded_.rend() - 1);
    padded_.insert(padded_.begin(), reflection.begin(), reflection.end());
    start_padded_ = true;
  }
  const int64_t n_fft = frames_.config().n_fft, hop = frames_.config().hop;
  const auto buffered = static_cast<int64_t>(padded_.size());
  const int64_t complete = buffered < n_fft ? 0 : (buffered - n_fft) / hop + 1;
  // Never the frame a longer stream would still drop (only possible when hop > n_fft / 2).
  return take_frames(std::min(complete, frames_.total_frames(received_) - emitted_));
}

at::Tensor StreamingLogMel::finish() {
  if (finished_) fail(ErrorCode::InvalidArgument, "StreamingLogMel::finish called twice");
  finished_ = true;
  frames_.check_length(received_, "StreamingLogMel::finish");
  const int64_t remaining = frames_.total_frames(received_) - emitted_;
  if (remaining <= 0) return take_frames(0);
  // Reflect padding of the end: x[N-2], x[N-3], ..., x[N-1-half]. The buffer starts at sample
  // emitted_ * hop - half, at or before N - 1 - half while a frame remains.
  const int64_t half = frames_.config().n_fft / 2;
  const int64_t last = static_cast<int64_t>(padded_.size()) - 1;  // x[N-1]
  IZWI_CHECK(last - half >= 0, "end padding needs {} samples, {} buffered", half + 1, padded_.size());
  std::vector<float> reflection(padded_.rbegin() + 1, padded_.rbegin() + 1 + half);
  padded_.insert(padded_.end(), reflection.begin(), reflection.end());
  return take_frames(remaining);
}

at::Tensor StreamingLogMel::take_frames(int64_t count) {
  const LogMelConfig& c = frames_.config();
  // Only the samples these frames read; off the CPU they cross to the device in one (blocking) copy.
  const int64_t span = count == 0 ? 0 : (count - 1) * c.hop + c.n_fft;
  const at::Tensor samples = at::from_blob(padded_.data(), {span}, at::kFloat).to(frames_.device());
  at::Tensor out = frames_.compute(samples, count);  // a new tensor: nothing aliases padded_
  padded_.erase(padded_.begin(), padded_.begin() + count * c.hop);
  emitted_ += count;
  return out;
}

}  // namespace izwi
