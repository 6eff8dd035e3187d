#pragma once

#include <cstdint>

namespace izwi {

/// Rotates x [tokens, heads, head_dim] in place (rotate-half convention); row t uses
/// cos/sin[positions[t]], tables of shape [max_positions, head_dim / 2].
void rope_cpu(float* x, const int64_t* positions, const float* cos_table, const float* sin_table, int64_t tokens,
              int64_t heads, int64_t head_dim);

}  // namespace izwi
