#pragma once
// Mono sample-rate conversion over libsoxr's streaming API: audio can be converted as it arrives
// (live transcription) and gives the same samples as converting it all at once.

#include <cstddef>
#include <memory>
#include <vector>

struct soxr;

namespace izwi {

class StreamingResampler {
 public:
  /// Throws InvalidArgument for a non-positive rate.
  StreamingResampler(int in_rate, int out_rate);
  ~StreamingResampler();
  StreamingResampler(const StreamingResampler&) = delete;
  StreamingResampler& operator=(const StreamingResampler&) = delete;

  /// Output that became available with these samples (soxr holds back a filter's length).
  /// Throws InvalidArgument for null or non-finite samples.
  std::vector<float> push(const float* samples, size_t count);
  /// The held-back tail; ends the stream, and the next push starts a new one.
  std::vector<float> flush();

 private:
  std::vector<float> process(const float* samples, size_t count);

  int in_rate_;
  int out_rate_;
  struct SoxrDeleter {
    void operator()(soxr* s) const;
  };
  std::unique_ptr<soxr, SoxrDeleter> soxr_;  ///< Null when the rates are equal: samples pass through.
};

}  // namespace izwi
