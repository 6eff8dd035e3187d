#pragma once
// The caller's side of a live transcription: checks pushed audio, resamples it to the model's
// rate and hands it to the engine. Lives in the TranscriptionStream (one caller thread), so the
// resampling never runs in the step loop.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audio/streaming_resampler.h"

namespace izwi::detail {

class EngineImpl;

class AudioFeed {
 public:
  AudioFeed(std::weak_ptr<EngineImpl> engine, std::string request_id, int32_t model_rate);

  /// Throws InvalidArgument for a non-positive rate, null or non-finite samples, a rate that
  /// changes mid-stream, or audio after finish().
  void push(const float* samples, size_t count, int32_t sample_rate);
  /// Sends the resampler's tail, then the end of the audio.
  void finish();

 private:
  void send(std::vector<float> samples);

  std::weak_ptr<EngineImpl> engine_;
  std::string request_id_;
  int32_t model_rate_;
  int32_t input_rate_ = 0;                         ///< Fixed by the first push.
  std::unique_ptr<StreamingResampler> resampler_;  ///< Created by the first push.
  bool finished_ = false;
};

}  // namespace izwi::detail
