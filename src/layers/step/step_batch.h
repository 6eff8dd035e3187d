#pragma once
// What the engine asks the executor to compute in one step: a flattened batch of sequences,
// each contributing a run of new positions (a prefill chunk or one decode position).
// Plain data with no tensors, so the scheduler side builds it without libtorch.

#include <cstdint>
#include <vector>

#include "layers/step/block_copy.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"

namespace izwi {

struct StepSequence {
  uint64_t seq_id = 0;
  int32_t start_pos = 0;                              ///< Positions already in the cache.
  int32_t num_tokens = 0;                             ///< New positions computed this step.
  const int32_t* token_ids = nullptr;                 ///< Inputs for positions [start_pos, start_pos + num_tokens).
  const std::vector<int32_t>* block_table = nullptr;  ///< Physical block per logical block.
  int32_t state_slot = -1;            ///< Per-sequence state (e.g. conv state); -1 if the model has none.
  bool fresh_state = false;           ///< First run since admission: (re)initialise the state slot.
  int32_t restore_block = -1;         ///< With fresh_state and start_pos > 0: block whose snapshot holds the state.
  SamplingState* sampling = nullptr;  ///< Sample a token after the last position, or nullptr.
  RequestState* state = nullptr;      ///< The request's model state, or nullptr.
  /// Prompt logprobs: the logprob of the prompt token after each new position p < prompt_len - 1
  /// not yet in scoring->prompt_logprobs_out (which holds positions [0, its size)) is appended
  /// there; token_ids must then reach the prompt's end.
  SamplingState* scoring = nullptr;
  int32_t prompt_len = 0;
};

struct StepBatch {
  std::vector<StepSequence> seqs;
  std::vector<BlockCopy> block_copies;  ///< Applied before the forward pass.

  int32_t num_tokens() const {
    int32_t n = 0;
    for (const auto& s : seqs) n += s.num_tokens;
    return n;
  }
};

}  // namespace izwi
