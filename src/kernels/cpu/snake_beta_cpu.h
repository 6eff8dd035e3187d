#pragma once
// SnakeBeta (BigVGAN's activation, the Qwen3-TTS codec's): one pass over memory with a vector
// sine, where libtorch makes four (scale, sin, square, multiply-add) and allocates two temporaries.

#include <cstdint>

namespace izwi {

/// out[r][t] = x[r][t] + inv_beta[c] * sin(alpha[c] * x[r][t])^2 for rows r = b * channels + c of
/// `length` samples. x's rows are consecutive; out's rows are `out_stride` floats apart (a
/// convolution's padded input, whose first columns hold the previous chunk). Every sample goes
/// through the same vector code wherever it lies in a row, so a stream decoded in chunks gets the
/// bits of the whole decode. Uses libtorch's thread pool.
void snake_beta_cpu(const float* x, const float* alpha, const float* inv_beta, float* out, int64_t rows,
                    int64_t channels, int64_t length, int64_t out_stride);

}  // namespace izwi
