#pragma once
// Prefix-tree keys for positions whose input is an embedding rather than one token id: a vector
// (a voice's x-vector, a row of encoded audio) or a frame of audio codes (plus a text id summed
// with it, or none). Equal inputs get one key, so requests that share such inputs (one voice, one
// conversation's earlier turns) share their KV; different inputs get different keys by
// construction (a registry, not a hash that could collide). A position's key names its own input
// only: the prefix tree matches whole prefixes, so what came before is matched by the earlier
// keys. Keys sit above every key of an id-built position. The registry lives as long as the model
// and holds each distinct input once (4 KB for a 1024-wide vector, ~100 bytes per frame).

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace izwi {

class EmbeddingKeys {
 public:
  /// `first_key`: the lowest key not taken by id-built positions.
  explicit EmbeddingKeys(int64_t first_key) : first_key_(first_key) {}

  /// The key of a position whose codec-track input is `values` (finite floats) over tts_pad.
  int32_t key_of(const std::vector<float>& values);
  /// The key of a position whose input is reference frame `codes` plus text id `text` (-1: none).
  int32_t key_of_frame(const std::vector<int32_t>& codes, int32_t text);
  // Both throw ResourceExhausted once the int32 key space is used up, and are safe from any thread.

 private:
  int32_t next_key();  // under mutex_

  std::mutex mutex_;
  int64_t first_key_;
  int64_t used_ = 0;
  std::map<std::vector<float>, int32_t> vector_keys_;
  std::map<std::pair<std::vector<int32_t>, int32_t>, int32_t> frame_keys_;
};

}  // namespace izwi
