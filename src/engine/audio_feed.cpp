#include "engine/audio_feed.h"

#include <cmath>

#include "common/check.h"
#include "engine/engine_impl.h"

namespace izwi::detail {

AudioFeed::AudioFeed(std::weak_ptr<EngineImpl> engine, std::string request_id, int32_t model_rate)
    : engine_(std::move(engine)), request_id_(std::move(request_id)), model_rate_(model_rate) {}

void AudioFeed::push(const float* samples, size_t count, int32_t sample_rate) {
  if (finished_) fail(ErrorCode::InvalidArgument, "request '{}': push_audio after finish_audio", request_id_);
  if (sample_rate <= 0) fail(ErrorCode::InvalidArgument, "request '{}': sample_rate {} must be positive", request_id_, sample_rate);
  if (input_rate_ != 0 && sample_rate != input_rate_) {
    fail(ErrorCode::InvalidArgument, "request '{}': sample_rate changed from {} to {} mid-stream", request_id_,
         input_rate_, sample_rate);
  }
  if (count > 0 && samples == nullptr) fail(ErrorCode::InvalidArgument, "request '{}': samples is null", request_id_);
  for (size_t i = 0; i < count; ++i) {
    if (!std::isfinite(samples[i])) {
      fail(ErrorCode::InvalidArgument, "request '{}': sample {} of the pushed chunk is not finite", request_id_, i);
    }
  }
  input_rate_ = sample_rate;
  std::vector<float> converted = to_model_rate(samples, count, sample_rate);
  if (auto engine = engine_.lock()) engine->push_audio(request_id_, std::move(converted));
}

void AudioFeed::finish() {
  if (finished_) return;
  finished_ = true;
  if (auto engine = engine_.lock()) engine->finish_audio(request_id_);
}

std::vector<float> AudioFeed::to_model_rate(const float* samples, size_t count, int32_t sample_rate) {
  if (sample_rate != model_rate_) {
    fail(ErrorCode::Unsupported, "request '{}': audio at {} Hz must be resampled to {} Hz", request_id_, sample_rate,
         model_rate_);
  }
  return std::vector<float>(samples, samples + count);
}

}  // namespace izwi::detail
