#pragma once
// Prefix-tree keys for prompt positions whose input is a vector (a cloned voice's x-vector): equal
// vectors get one key, so requests in one voice share the voice's prompt KV, and different vectors
// get different keys by construction (a registry, not a hash that could collide). Keys sit above
// every key of an id-built position. The registry lives as long as the model and holds each
// distinct vector once (4 KB for a 1024-wide x-vector).

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace izwi {

class VoiceKeys {
 public:
  /// `first_key`: the lowest key not taken by id-built positions.
  explicit VoiceKeys(int64_t first_key) : first_key_(first_key) {}

  /// The key of `values` (finite floats). ResourceExhausted once the int32 key space is used up.
  /// Safe from any thread.
  int32_t key_of(const std::vector<float>& values);

 private:
  std::mutex mutex_;
  int64_t first_key_;
  std::map<std::vector<float>, int32_t> keys_;
};

}  // namespace izwi
