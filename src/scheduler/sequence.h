#pragma once
// The scheduler's view of a request: its positions (prompt + generated tokens), how many of
// them are in the cache, and where it stands in the queues. No tensors, no threads.

#include <cstdint>
#include <limits>
#include <vector>

namespace izwi {

enum class SequenceStatus { Waiting, Running, Finished };

struct Sequence {
  uint64_t id = 0;
  int32_t priority = 0;         ///< Larger is more urgent.
  uint64_t arrival = 0;         ///< Submission order; unique.
  std::vector<int32_t> tokens;  ///< Prompt followed by generated ids.
  int32_t prompt_len = 0;
  int32_t num_computed = 0;  ///< Leading positions whose K/V are in the cache.
  SequenceStatus status = SequenceStatus::Waiting;
  int32_t num_preemptions = 0;
  int32_t prefix_hit_tokens = 0;  ///< Served from the prefix cache at the first admission.
  bool admitted_before = false;
  /// Set on admission, consumed by the first execution: state slot must be (re)initialised,
  /// from the snapshot in `restore_block` when the admission hit the prefix cache.
  bool fresh_state = false;
  int32_t restore_block = -1;
  /// Positions whose inputs exist (streamed audio arrives over time); all tokens by default.
  int32_t input_limit = std::numeric_limits<int32_t>::max();
  /// Leading positions whose key in `tokens` alone determines their K/V, so they may be shared
  /// through the prefix cache: all for text, none when positions carry streamed audio, the
  /// prompt for speech synthesis (whose generated positions are frames, keyed by codebook 0 only).
  int32_t cacheable_len = std::numeric_limits<int32_t>::max();

  /// Positions that could be computed now.
  int32_t runnable_tokens() const {
    const int32_t known =
        static_cast<int32_t>(tokens.size()) < input_limit ? static_cast<int32_t>(tokens.size()) : input_limit;
    return known > num_computed ? known - num_computed : 0;
  }
  int32_t num_generated() const { return static_cast<int32_t>(tokens.size()) - prompt_len; }
};

}  // namespace izwi
