#pragma once
// The SnakeBeta dispatch point (BigVGAN's activation, the Qwen3-TTS codec decoder's).

#include <ATen/ATen.h>

#include "kernels/backend.h"

namespace izwi::ops {

/// x + inv_beta * sin(x * alpha)^2 per channel, written into `out`. x [B, C, T]; alpha and
/// inv_beta [1, C, 1] (exp(alpha) and 1 / (exp(beta) + eps), precomputed); out [B, C, T], which may
/// be a view (the tail of a convolution's padded input). Cpu: one fused pass for float32 when
/// out's rows (the last dim) are contiguous and evenly spaced; otherwise libtorch ops.
void snake_beta(const Backend& backend, const at::Tensor& x, const at::Tensor& alpha, const at::Tensor& inv_beta,
                const at::Tensor& out);

}  // namespace izwi::ops
