#include "layers/step/forward_context.h"

#include "common/check.h"

namespace izwi {

ForwardContext make_forward_context(const StepBatch& batch, int64_t block_size, const at::Device& device,
                                    at::ScalarType dtype, KernelBackend backend) {
  ForwardContext ctx;
  ctx.dtype = dtype;
  ctx.block_size = block_size;
  ctx.backend = backend;
  const int64_t total = batch.num_tokens();
  ctx.num_tokens = total;
  std::vector<int64_t> ids, positions, slots;
  ids.reserve(total);
  positions.reserve(total);
  slots.reserve(total);
  for (const StepSequence& s : batch.seqs) {
    SeqSlice slice;
    slice.offset = static_cast<int64_t>(ids.size());
    slice.length = s.num_tokens;
    slice.start_pos = s.start_pos;
    slice.block_table = s.block_table;
    slice.state_slot = s.state_slot;
    slice.fresh_state = s.fresh_state;
    slice.restore_block = s.restore_block;
    const std::vector<int32_t>& table = *s.block_table;
    for (int32_t i = 0; i < s.num_tokens; ++i) {
      const int64_t pos = s.start_pos + i;
      const size_t logical = static_cast<size_t>(pos / block_size);
      IZWI_CHECK(logical < table.size(), "position {} has no block (table holds {})", pos, table.size());
      ids.push_back(s.token_ids[i]);
      positions.push_back(pos);
      slots.push_back(static_cast<int64_t>(table[logical]) * block_size + pos % block_size);
    }
    ctx.seqs.push_back(slice);
    ctx.states.push_back(s.state);
  }
  auto options = at::TensorOptions().dtype(at::kLong);
  ctx.input_ids = at::tensor(ids, options).to(device);
  ctx.positions = at::tensor(positions, options).to(device);
  ctx.slot_mapping = at::tensor(slots, options).to(device);
  return ctx;
}

}  // namespace izwi
