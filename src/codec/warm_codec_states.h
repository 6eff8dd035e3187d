#pragma once
// Codec states that have already decoded a known run of frames, kept so that the next stream
// starting with those frames copies the state instead of decoding them again. In-context voice
// cloning starts every request's decoder from the voice's reference frames (several seconds of
// audio whose samples are dropped); with this, a voice's second request skips that warm-up.
// Least recently used states go first past the capacity. Thread-safe.

#include <ATen/ATen.h>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "codec/codec_decoder.h"

namespace izwi {

class WarmCodecStates {
 public:
  explicit WarmCodecStates(size_t capacity) : capacity_(capacity) {}

  /// A new state of `codec` that has decoded `frames` ([frame][codebook], their audio dropped):
  /// a copy of a kept one when the same frames were decoded before, else decoded now and kept.
  std::unique_ptr<CodecDecoderState> state_after(const CodecDecoder& codec,
                                                 const std::vector<std::vector<int32_t>>& frames);
  int64_t hits() const;
  int64_t misses() const;

 private:
  struct Entry {
    const CodecDecoder* codec;
    std::vector<std::vector<int32_t>> frames;
    std::unique_ptr<CodecDecoderState> state;
  };

  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  ///< Most recently used first.
  int64_t hits_ = 0, misses_ = 0;
};

/// [frame][codebook] -> int64 [codebooks, frames] for CodecDecoder.
at::Tensor frames_to_codes(const std::vector<std::vector<int32_t>>& frames, size_t first, size_t count);

}  // namespace izwi
