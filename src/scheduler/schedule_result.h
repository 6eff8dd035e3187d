#pragma once

#include <cstdint>
#include <vector>

#include "layers/step/block_copy.h"
#include "scheduler/sequence.h"

namespace izwi {

struct ScheduledSequence {
  Sequence* seq = nullptr;
  int32_t num_tokens = 0;  ///< Positions computed this step, from seq->num_computed.
  bool sample = false;     ///< The step reaches the last known token: sample the next one.
};

/// The plan for one step. Preempted sequences were moved back to waiting with their blocks freed.
struct ScheduleResult {
  std::vector<ScheduledSequence> scheduled;
  std::vector<Sequence*> preempted;
  std::vector<BlockCopy> block_copies;
  int32_t num_tokens = 0;
  /// Runnable sequences got nothing because the pool is full and preemption is off.
  bool stalled_on_memory = false;
  /// Sequences (streamed input only) that need more blocks than the whole pool holds.
  std::vector<Sequence*> unfittable;
};

}  // namespace izwi
