#pragma once

#include <cstdint>

namespace izwi {

/// out[t, i] = silu(gate_up[t, i]) * gate_up[t, width + i]: the SwiGLU product of a fused
/// [gate | up] projection of `width` columns each.
void silu_mul_cpu(const float* gate_up, float* out, int64_t tokens, int64_t width);

}  // namespace izwi
