#pragma once
// The cos and sin of one rotary pair, shared by the RoPE kernel and the fused attention-inputs
// kernel so both rotate by the same floats.

#include <cstdint>

#include "kernels/cuda/elements.cuh"

namespace izwi {

/// Pair i at `position`: from the tables cos / sin [positions, half] when inv_freq is null, else
/// from float(position) * inv_freq[i] (float product then cosf/sinf, as
/// at::outer(positions.to(kFloat), inv_freq).cos()), rounded to bf16 when `bf16_angles`, as the
/// tables of a bf16 model are. Table: a pointer to float or bf16, or FloatOrBf16.
template <typename Table>
__device__ __forceinline__ void rope_cos_sin(Table cos_table, Table sin_table, const float* inv_freq, bool bf16_angles,
                                             int64_t position, int64_t half, int64_t i, float& c, float& s) {
  if (inv_freq == nullptr) {
    c = to_float(cos_table[position * half + i]);
    s = to_float(sin_table[position * half + i]);
    return;
  }
  const float angle = static_cast<float>(position) * inv_freq[i];
  c = cosf(angle);
  s = sinf(angle);
  if (bf16_angles) {
    c = to_float(from_float<__nv_bfloat16>(c));
    s = to_float(from_float<__nv_bfloat16>(s));
  }
}

}  // namespace izwi
