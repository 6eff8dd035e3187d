#include "engine/audio_feed.h"

#include <fmt/format.h>

#include "audio/sample_checks.h"
#include "common/check.h"
#include "engine/engine_impl.h"

namespace izwi::detail {

AudioFeed::AudioFeed(std::weak_ptr<EngineImpl> engine, std::string request_id, int32_t model_rate)
    : engine_(std::move(engine)), request_id_(std::move(request_id)), model_rate_(model_rate) {}

void AudioFeed::push(const float* samples, size_t count, int32_t sample_rate) {
  const std::string context = fmt::format("request '{}': push_audio", request_id_);
  if (finished_) fail(ErrorCode::InvalidArgument, "{} after finish_audio", context);
  check_sample_rate(sample_rate, "sample_rate", context);
  if (input_rate_ != 0 && sample_rate != input_rate_) {
    fail(ErrorCode::InvalidArgument, "{}: sample_rate changed from {} to {} mid-stream", context, input_rate_,
         sample_rate);
  }
  check_samples(samples, count, context, EmptySamples::Allow);
  if (!resampler_) {
    input_rate_ = sample_rate;
    resampler_ = std::make_unique<StreamingResampler>(input_rate_, model_rate_);
  }
  send(resampler_->push(samples, count));
}

void AudioFeed::finish() {
  if (finished_) return;
  finished_ = true;
  if (resampler_) send(resampler_->flush());
  if (auto engine = engine_.lock()) engine->finish_audio(request_id_);
}

void AudioFeed::send(std::vector<float> samples) {
  if (samples.empty()) return;
  if (auto engine = engine_.lock()) engine->push_audio(request_id_, std::move(samples));
}

}  // namespace izwi::detail
