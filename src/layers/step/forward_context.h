#pragma once
// A step's batch in the form models consume: flattened inputs as tensors on the model's device,
// plus each sequence's slice of the batch and its cache addresses on the host (and, for the Cuda
// backend, on the device).

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "kernels/backend.h"
#include "kernels/device_step_arrays.h"
#include "kernels/seq_slice.h"
#include "layers/step/step_batch.h"

namespace izwi {

struct ForwardContext {
  at::Tensor input_ids;     ///< [T] int64
  at::Tensor positions;     ///< [T] int64
  at::Tensor slot_mapping;  ///< [T] int64: block * block_size + offset where each new K/V goes
  std::vector<SeqSlice> seqs;
  std::vector<RequestState*> states;  ///< Per sequence, beside `seqs`: its model state, or nullptr.
  DeviceStepArrays device_seqs;       ///< `seqs` and their block tables on the device (Cuda backend only).
  int64_t num_tokens = 0;
  int64_t block_size = 0;
  at::ScalarType dtype = at::kFloat;  ///< Compute dtype of activations: backend->dtype().
  /// The device, dtypes and kernels every op of the step runs with; never null once built.
  const Backend* backend = nullptr;
};

/// Flattens a StepBatch; slot mapping and positions are computed from each block table. Every
/// input goes to the device in one copy: ids, positions and slots (and, for the Cuda backend, the
/// DeviceSeq array and block tables) are packed into one host buffer, pinned on a CUDA device so
/// the copy is asynchronous, and the tensors above are views of its device copy. The block tables
/// get at least `min_table_stride` columns (a CUDA graph's fixed layout). The context refers to
/// `backend`, which must outlive it.
ForwardContext make_forward_context(const StepBatch& batch, int64_t block_size, const Backend& backend,
                                    int64_t min_table_stride = 0);

/// The staging make_forward_context does, without a backend (ctx.backend stays null): with
/// `device_arrays` the DeviceSeq array and block tables the CUDA kernels read are packed too, on
/// any device, so the CPU build's tests check their layout.
ForwardContext stage_forward_inputs(const StepBatch& batch, int64_t block_size, const at::Device& device,
                                    bool device_arrays, int64_t min_table_stride = 0);

}  // namespace izwi
