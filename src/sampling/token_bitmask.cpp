#include "sampling/token_bitmask.h"

#include <algorithm>
#include <limits>

#include "common/check.h"

namespace izwi {

void apply_token_bitmask(float* logits, int64_t vocab, const uint32_t* words) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t base = 0; base < vocab; base += 32) {
    const uint32_t word = words[base / 32];
    if (word == ~0u) continue;
    const int64_t end = std::min<int64_t>(vocab, base + 32);
    if (word == 0) {  // the common case: most of a constrained row is disallowed
      std::fill(logits + base, logits + end, kNegInf);
      continue;
    }
    for (int64_t id = base; id < end; ++id) {
      if (((word >> (id - base)) & 1u) == 0) logits[id] = kNegInf;
    }
  }
}

void apply_token_bitmask(at::Tensor& logits, const at::Tensor& rows, const at::Tensor& words) {
  const int64_t count = rows.size(0), vocab = logits.size(1), per_row = words.size(1);
  IZWI_CHECK(words.dim() == 2 && words.size(0) == count && per_row * 32 >= vocab,
             "apply_token_bitmask: {} rows of {} words for {} rows of a {}-id vocabulary", words.size(0), per_row,
             count, vocab);
  if (count == 0) return;
  // bit j of each word, for j in [0, 32): [rows, W, 32] -> [rows, W * 32], ids past vocab cut off.
  const at::Tensor shifts = at::arange(32, words.options());
  const at::Tensor allowed =
      words.unsqueeze(2).bitwise_right_shift(shifts).bitwise_and(1).reshape({count, per_row * 32}).narrow(1, 0, vocab);
  at::Tensor selected = logits.index_select(0, rows);
  selected.masked_fill_(allowed.eq(0), -std::numeric_limits<float>::infinity());
  logits.index_copy_(0, rows, selected);
}

}  // namespace izwi
