#pragma once
// The caller's side of a live transcription: checks pushed audio, converts it to the model's
// sample rate and hands it to the engine. Lives in the TranscriptionStream (one caller thread).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace izwi::detail {

class EngineImpl;

class AudioFeed {
 public:
  AudioFeed(std::weak_ptr<EngineImpl> engine, std::string request_id, int32_t model_rate);

  /// Throws InvalidArgument for a non-positive rate, non-finite samples, a rate that changes
  /// mid-stream, or audio after finish().
  void push(const float* samples, size_t count, int32_t sample_rate);
  void finish();

 private:
  std::vector<float> to_model_rate(const float* samples, size_t count, int32_t sample_rate);

  std::weak_ptr<EngineImpl> engine_;
  std::string request_id_;
  int32_t model_rate_;
  int32_t input_rate_ = 0;  ///< Fixed by the first push.
  bool finished_ = false;
};

}  // namespace izwi::detail
