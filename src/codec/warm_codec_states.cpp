#include "codec/warm_codec_states.h"

#include <algorithm>

#include "common/check.h"

namespace izwi {

at::Tensor frames_to_codes(const std::vector<std::vector<int32_t>>& frames, size_t first, size_t count) {
  IZWI_CHECK(first + count <= frames.size() && count > 0, "frames {}..{} of {}", first, first + count, frames.size());
  const int64_t groups = static_cast<int64_t>(frames[first].size());
  at::Tensor codes = at::empty({groups, static_cast<int64_t>(count)}, at::kLong);
  auto a = codes.accessor<int64_t, 2>();
  for (size_t f = 0; f < count; ++f) {
    for (int64_t k = 0; k < groups; ++k) a[k][static_cast<int64_t>(f)] = frames[first + f][static_cast<size_t>(k)];
  }
  return codes;
}

std::unique_ptr<CodecDecoderState> WarmCodecStates::state_after(const CodecDecoder& codec,
                                                                const std::vector<std::vector<int32_t>>& frames) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->codec == &codec && it->frames == frames) {
        entries_.splice(entries_.begin(), entries_, it);
        ++hits_;
        return entries_.front().state->clone();
      }
    }
    ++misses_;
  }
  // Decoded outside the lock: another stream may warm another voice meanwhile.
  std::unique_ptr<CodecDecoderState> state = codec.new_state();
  // Fed in bounded chunks (streaming is exact in any chunking): the dropped audio of a long
  // reference is never held whole.
  const size_t chunk = static_cast<size_t>(CodecDecoder::kDecodeChunkFrames);
  for (size_t first = 0; first < frames.size(); first += chunk) {
    codec.decode_streaming({state.get()}, {frames_to_codes(frames, first, std::min(chunk, frames.size() - first))});
  }
  if (capacity_ == 0) return state;
  std::unique_ptr<CodecDecoderState> copy = state->clone();
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_front(Entry{&codec, frames, std::move(copy)});
  while (entries_.size() > capacity_) entries_.pop_back();
  return state;
}

int64_t WarmCodecStates::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

int64_t WarmCodecStates::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

}  // namespace izwi
