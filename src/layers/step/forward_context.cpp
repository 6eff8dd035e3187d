#include "layers/step/forward_context.h"

#include <algorithm>

#include "common/check.h"

namespace izwi {

namespace {

int64_t blocks_of(int64_t positions, int64_t block_size) { return (positions + block_size - 1) / block_size; }

}  // namespace

ForwardContext make_forward_context(const StepBatch& batch, int64_t block_size, const Backend& backend,
                                    int64_t min_table_stride) {
  ForwardContext ctx =
      stage_forward_inputs(batch, block_size, backend.device(), backend.cuda_kernels(), min_table_stride);
  ctx.dtype = backend.dtype();
  ctx.backend = &backend;
  return ctx;
}

ForwardContext stage_forward_inputs(const StepBatch& batch, int64_t block_size, const at::Device& device,
                                    bool device_arrays, int64_t min_table_stride) {
  ForwardContext ctx;
  ctx.block_size = block_size;
  const int64_t total = batch.num_tokens();
  ctx.num_tokens = total;

  // Layout of the staged words: ids, positions, slots ([total] each), then for the Cuda backend
  // the DeviceSeq array (4 words per sequence) and the block tables (int32, two per word).
  const int64_t num_seqs = static_cast<int64_t>(batch.seqs.size());
  int64_t table_stride = min_table_stride, max_length = 0;
  for (const StepSequence& s : batch.seqs) {
    table_stride = std::max(table_stride, blocks_of(s.start_pos + s.num_tokens, block_size));
    max_length = std::max<int64_t>(max_length, s.num_tokens);
  }
  const int64_t seqs_word = 3 * total;
  const int64_t tables_word = seqs_word + (device_arrays ? 4 * num_seqs : 0);
  const int64_t words = tables_word + (device_arrays ? (num_seqs * table_stride + 1) / 2 : 0);
  at::Tensor host = at::empty({words}, at::TensorOptions().dtype(at::kLong).pinned_memory(device.is_cuda()));
  int64_t* ids = host.data_ptr<int64_t>();
  int64_t* positions = ids + total;
  int64_t* slots = positions + total;
  auto* seq_array = reinterpret_cast<DeviceSeq*>(ids + seqs_word);
  auto* tables = reinterpret_cast<int32_t*>(ids + tables_word);
  if (device_arrays) std::fill(tables, tables + num_seqs * table_stride, -1);

  int64_t row = 0;
  for (size_t i = 0; i < batch.seqs.size(); ++i) {
    const StepSequence& s = batch.seqs[i];
    SeqSlice slice;
    slice.offset = row;
    slice.length = s.num_tokens;
    slice.start_pos = s.start_pos;
    slice.block_table = s.block_table;
    slice.state_slot = s.state_slot;
    slice.fresh_state = s.fresh_state;
    slice.restore_block = s.restore_block;
    const std::vector<int32_t>& table = *s.block_table;
    const int64_t context_blocks = blocks_of(s.start_pos + s.num_tokens, block_size);
    IZWI_CHECK(static_cast<size_t>(context_blocks) <= table.size(), "position {} has no block (table holds {})",
               s.start_pos + s.num_tokens - 1, table.size());
    for (int32_t t = 0; t < s.num_tokens; ++t, ++row) {
      const int64_t pos = s.start_pos + t;
      ids[row] = s.token_ids[t];
      positions[row] = pos;
      slots[row] = static_cast<int64_t>(table[static_cast<size_t>(pos / block_size)]) * block_size + pos % block_size;
    }
    if (device_arrays) {
      seq_array[i] = DeviceSeq{slice.offset, slice.length, slice.start_pos, s.state_slot, 0};
      std::copy(table.begin(), table.begin() + context_blocks, tables + static_cast<int64_t>(i) * table_stride);
    }
    ctx.seqs.push_back(slice);
    ctx.states.push_back(s.state);
  }

  // Pinned memory comes from libtorch's caching host allocator, which keeps a buffer from reuse
  // until the asynchronous copy out of it has finished.
  const at::Tensor staged = device.is_cpu() ? host : host.to(device, at::kLong, /*non_blocking=*/true);
  ctx.input_ids = staged.narrow(0, 0, total);
  ctx.positions = staged.narrow(0, total, total);
  ctx.slot_mapping = staged.narrow(0, 2 * total, total);
  if (device_arrays) {
    DeviceStepArrays& d = ctx.device_seqs;
    d.words = staged;
    d.seqs = reinterpret_cast<const DeviceSeq*>(staged.data_ptr<int64_t>() + seqs_word);
    d.block_tables = reinterpret_cast<const int32_t*>(staged.data_ptr<int64_t>() + tables_word);
    d.num_seqs = static_cast<int32_t>(num_seqs);
    d.table_stride = table_stride;
    d.max_length = max_length;
  }
  return ctx;
}

}  // namespace izwi
