#pragma once
// A step's batch in the form models consume: flattened inputs as tensors on the model's device,
// plus each sequence's slice of the batch and its cache addresses on the host.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "layers/step/step_batch.h"

namespace izwi {

struct SeqSlice {
  int64_t offset = 0;     ///< First row of this sequence in the flattened batch.
  int64_t length = 0;     ///< New positions.
  int64_t start_pos = 0;  ///< Positions already cached.
  const std::vector<int32_t>* block_table = nullptr;
  int32_t state_slot = -1;
  bool fresh_state = false;
  int32_t restore_block = -1;
  RequestState* state = nullptr;  ///< The request's model state (audio in or out), or nullptr.
};

struct ForwardContext {
  at::Tensor input_ids;     ///< [T] int64
  at::Tensor positions;     ///< [T] int64
  at::Tensor slot_mapping;  ///< [T] int64: block * block_size + offset where each new K/V goes
  std::vector<SeqSlice> seqs;
  int64_t num_tokens = 0;
  int64_t block_size = 0;
  at::ScalarType dtype = at::kFloat;  ///< Compute dtype of activations.
  bool fast_kernels = false;          ///< Use the CPU kernels instead of plain libtorch ops.
};

/// Flattens a StepBatch; slot mapping and positions are computed from each block table.
ForwardContext make_forward_context(const StepBatch& batch, int64_t block_size, const at::Device& device,
                                    at::ScalarType dtype, bool fast_kernels);

}  // namespace izwi
