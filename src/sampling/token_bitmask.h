#pragma once
// Applying an allowed-token bitmask (TokenConstraint) to logits: a disallowed id's logit becomes
// -inf, so no processor or draw can pick it. Bit id % 32 of word id / 32 set = id allowed.

#include <ATen/ATen.h>

#include <cstdint>

namespace izwi {

/// One row of float logits on the host, in place; `words` covers at least `vocab` ids.
void apply_token_bitmask(float* logits, int64_t vocab, const uint32_t* words);

/// Rows `rows` (int64, on the logits' device) of `logits` [n, vocab] (any device, any float
/// dtype), in place, where the logits are: `words` [rows, W] int32 on the same device, row i's
/// mask for logits row rows[i], W * 32 >= vocab. The bits are expanded to a boolean mask there,
/// so only the words cross to a device.
void apply_token_bitmask(at::Tensor& logits, const at::Tensor& rows, const at::Tensor& words);

}  // namespace izwi
