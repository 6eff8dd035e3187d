#pragma once

#include <cstdint>

namespace izwi {

/// One sequence's causal depthwise convolution over `length` new rows of `bx` [length, channels]:
/// out[t][c] = bias[c] + sum_k weight_t[k][c] * x[t + k - width][c], with width = kernel - 1 and
/// x at negative positions taken from `state` [width, channels] (the previous inputs).
/// `window` is scratch of (width + length) rows; on return it holds [old state; bx], so callers
/// can copy block-boundary snapshots out of it, and `state` holds the last `width` inputs.
/// weight_t is [kernel, channels]; bias may be null.
void short_conv_cpu(const float* bx, int64_t length, int64_t channels, int64_t kernel, const float* weight_t,
                    const float* bias, float* state, float* window, float* out);

}  // namespace izwi
