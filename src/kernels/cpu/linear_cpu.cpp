#include "kernels/cpu/linear_cpu.h"

// Each task runs Eigen on one thread; the parallelism comes from splitting rows across tasks.
#define EIGEN_DONT_PARALLELIZE
#include <ATen/Parallel.h>
#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace izwi {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline float bf16_to_float(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &widened, sizeof(f));
  return f;
}

#if defined(__AVX512F__)
// 16 weights starting at column j of a row, as floats; `mask` selects the valid lanes of a tail.
template <WeightFormat F>
inline __m512 load_weights(const void* row, int64_t j, __mmask16 mask) {
  if constexpr (F == WeightFormat::F32) {
    return _mm512_maskz_loadu_ps(mask, static_cast<const float*>(row) + j);
  } else {
    const __m256i raw = _mm256_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(row) + j);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
  }
}

// out[r * TT + t] = dot(row r, x row t) for R rows and TT tokens. Each row is read front to back;
// two rows far apart in the matrix give one core two sequential streams, which keeps more memory
// reads in flight than one (measured +8% on a decode step). Independent accumulators come from
// the rows, the tokens and, when those are few, from splitting the columns into U chunks.
template <WeightFormat F, int R, int TT>
void dot_rows(const void* const* rows, const float* x, int64_t in, float* out) {
  constexpr int U = R * TT >= 4 ? 1 : 4 / (R * TT);
  __m512 acc[R][U][TT];
  #pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    #pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      #pragma GCC unroll 4
      for (int t = 0; t < TT; ++t) acc[r][u][t] = _mm512_setzero_ps();
    }
  }
  const __mmask16 all = 0xffff;
  int64_t j = 0;
  for (; j + 16 * U <= in; j += 16 * U) {
    #pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      #pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512 w = load_weights<F>(rows[r], j + 16 * u, all);
        #pragma GCC unroll 4
        for (int t = 0; t < TT; ++t) {
          acc[r][u][t] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + t * in + j + 16 * u), acc[r][u][t]);
        }
      }
    }
  }
  for (; j < in; j += 16) {
    const __mmask16 mask = in - j >= 16 ? all : static_cast<__mmask16>((1u << (in - j)) - 1);
    #pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 w = load_weights<F>(rows[r], j, mask);
      #pragma GCC unroll 4
      for (int t = 0; t < TT; ++t) {
        acc[r][0][t] = _mm512_fmadd_ps(w, _mm512_maskz_loadu_ps(mask, x + t * in + j), acc[r][0][t]);
      }
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    #pragma GCC unroll 4
    for (int t = 0; t < TT; ++t) {
      __m512 sum = acc[r][0][t];
      #pragma GCC unroll 4
      for (int u = 1; u < U; ++u) sum = _mm512_add_ps(sum, acc[r][u][t]);
      out[r * TT + t] = _mm512_reduce_add_ps(sum);
    }
  }
}

// out[t][r] = dot(row r, x row t) for a 4-row x 4-token tile: 16 independent accumulators
// saturate the FMA units when the batch is large enough for compute to matter. Four rows read
// side by side defeat the hardware prefetcher, so the caller names the rows of the next tile
// (`prefetch`, or null) and they are fetched into L1 while this tile computes.
template <WeightFormat F>
void dot_tile(const void* const* rows, const void* const* prefetch, const float* x, int64_t in, float out[4][4]) {
  constexpr int64_t kElem = F == WeightFormat::F32 ? 4 : 2;
  __m512 acc[4][4];
  #pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    #pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) acc[r][t] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < in; j += 16) {
    const __mmask16 mask = in - j >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (in - j)) - 1);
    if (prefetch != nullptr) {
      for (int r = 0; r < 4; ++r) {
        const char* line = static_cast<const char*>(prefetch[r]) + j * kElem;
        _mm_prefetch(line, _MM_HINT_T0);
        if constexpr (F == WeightFormat::F32) _mm_prefetch(line + 32, _MM_HINT_T0);
      }
    }
    __m512 xv[4];
    #pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) xv[t] = _mm512_maskz_loadu_ps(mask, x + t * in + j);
    #pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) {
      const __m512 w = load_weights<F>(rows[r], j, mask);
      #pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) acc[r][t] = _mm512_fmadd_ps(w, xv[t], acc[r][t]);
    }
  }
  #pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    #pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) out[t][r] = _mm512_reduce_add_ps(acc[r][t]);
  }
}
#else
template <WeightFormat F>
void dot_tile(const void* const* rows, const void* const* prefetch, const float* x, int64_t in, float out[4][4]) {
  for (int r = 0; r < 4; ++r) {
    for (int t = 0; t < 4; ++t) {
      float sum = 0.0f;
      for (int64_t j = 0; j < in; ++j) {
        const float w = F == WeightFormat::F32 ? static_cast<const float*>(rows[r])[j]
                                               : bf16_to_float(static_cast<const uint16_t*>(rows[r])[j]);
        sum += w * x[t * in + j];
      }
      out[t][r] = sum;
    }
  }
}

template <WeightFormat F, int R, int TT>
void dot_rows(const void* const* rows, const float* x, int64_t in, float* out) {
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < TT; ++t) {
      float sum = 0.0f;
      for (int64_t j = 0; j < in; ++j) {
        const float w = F == WeightFormat::F32 ? static_cast<const float*>(rows[r])[j]
                                               : bf16_to_float(static_cast<const uint16_t*>(rows[r])[j]);
        sum += w * x[t * in + j];
      }
      out[r * TT + t] = sum;
    }
  }
}
#endif

template <WeightFormat F, int R>
void dot_rows_tokens(const void* const* rows, const float* x, int64_t tokens, int64_t in, float* out) {
  switch (tokens) {
    case 1: dot_rows<F, R, 1>(rows, x, in, out); break;
    case 2: dot_rows<F, R, 2>(rows, x, in, out); break;
    case 3: dot_rows<F, R, 3>(rows, x, in, out); break;
    default: dot_rows<F, R, 4>(rows, x, in, out); break;
  }
}

// Rows [row_begin, row_end) streamed front to back as two sequences, the range's first half
// alongside its second; tokens in groups of up to 4.
template <WeightFormat F>
void gemv_rows_streaming(const uint8_t* base, size_t row_bytes, const float* x, int64_t tokens, int64_t in,
                         int64_t out, const float* bias, float* y, int64_t row_begin, int64_t row_end) {
  const int64_t half = (row_end - row_begin) / 2;
  float result[8];
  auto store = [&](int64_t o, int64_t t0, int64_t n, const float* r) {
    for (int64_t t = 0; t < n; ++t) y[(t0 + t) * out + o] = r[t] + (bias != nullptr ? bias[o] : 0.0f);
  };
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = row_begin + i, b = row_begin + half + i;
    const void* rows[2] = {base + static_cast<size_t>(a) * row_bytes, base + static_cast<size_t>(b) * row_bytes};
    for (int64_t t0 = 0; t0 < tokens; t0 += 4) {
      const int64_t n = std::min<int64_t>(4, tokens - t0);
      dot_rows_tokens<F, 2>(rows, x + t0 * in, n, in, result);
      store(a, t0, n, result);
      store(b, t0, n, result + n);
    }
  }
  if (row_begin + 2 * half < row_end) {
    const int64_t o = row_end - 1;
    const void* rows[1] = {base + static_cast<size_t>(o) * row_bytes};
    for (int64_t t0 = 0; t0 < tokens; t0 += 4) {
      const int64_t n = std::min<int64_t>(4, tokens - t0);
      dot_rows_tokens<F, 1>(rows, x + t0 * in, n, in, result);
      store(o, t0, n, result);
    }
  }
}

template <WeightFormat F>
void gemv_rows(const float* x, int64_t tokens, int64_t in, const void* weight, int64_t out, const float* bias,
               float* y, int64_t row_begin, int64_t row_end) {
  constexpr size_t kElem = F == WeightFormat::F32 ? sizeof(float) : sizeof(uint16_t);
  const auto* base = static_cast<const uint8_t*>(weight);
  const size_t row_bytes = static_cast<size_t>(in) * kElem;
  if (tokens <= 4) {
    gemv_rows_streaming<F>(base, row_bytes, x, tokens, in, out, bias, y, row_begin, row_end);
    return;
  }
  // More tokens: 4-row tiles, every group of 4 tokens reusing the rows from L1. Tokens past the
  // last full group of 4 are handled by the streaming kernel.
  const int64_t full_tokens = tokens / 4 * 4;
  float result[4][4];
  int64_t o = row_begin;
  for (; o + 4 <= row_end; o += 4) {
    const void* rows[4] = {base + (o + 0) * row_bytes, base + (o + 1) * row_bytes, base + (o + 2) * row_bytes,
                           base + (o + 3) * row_bytes};
    const bool has_next = o + 8 <= row_end;
    const void* next[4] = {base + (o + 4) * row_bytes, base + (o + 5) * row_bytes, base + (o + 6) * row_bytes,
                           base + (o + 7) * row_bytes};
    for (int64_t t0 = 0; t0 < full_tokens; t0 += 4) {
      dot_tile<F>(rows, has_next && t0 == 0 ? next : nullptr, x + t0 * in, in, result);
      for (int64_t t = 0; t < 4; ++t) {
        for (int64_t r = 0; r < 4; ++r) y[(t0 + t) * out + o + r] = result[t][r] + (bias != nullptr ? bias[o + r] : 0.0f);
      }
    }
  }
  if (o < row_end) gemv_rows_streaming<F>(base, row_bytes, x, full_tokens, in, out, bias, y, o, row_end);
  if (full_tokens < tokens) {
    gemv_rows_streaming<F>(base, row_bytes, x + full_tokens * in, tokens - full_tokens, in, out, bias,
                           y + full_tokens * out, row_begin, row_end);
  }
}

template <WeightFormat F>
void gemm_rows(const float* x, int64_t tokens, int64_t in, const void* weight, int64_t out, const float* bias,
               float* y, int64_t row_begin, int64_t row_end) {
  const int64_t rows = row_end - row_begin;
  Eigen::Map<const RowMajor> X(x, tokens, in);
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> Y(y + row_begin, tokens, rows, Eigen::OuterStride<>(out));
  if constexpr (F == WeightFormat::F32) {
    Eigen::Map<const RowMajor> W(static_cast<const float*>(weight) + row_begin * in, rows, in);
    Y.noalias() = X * W.transpose();
  } else {
    // Convert 64 rows at a time: the scratch stays in cache and small for wide matrices.
    constexpr int64_t kBlock = 64;
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(kBlock * in));
    for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
      const int64_t n = std::min(kBlock, rows - r0);
      const uint16_t* src = static_cast<const uint16_t*>(weight) + (row_begin + r0) * in;
      for (int64_t i = 0; i < n * in; ++i) scratch[static_cast<size_t>(i)] = bf16_to_float(src[i]);
      Eigen::Map<const RowMajor> W(scratch.data(), n, in);
      Y.middleCols(r0, n).noalias() = X * W.transpose();
    }
  }
  if (bias != nullptr) {
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t o = 0; o < rows; ++o) Y(t, o) += bias[row_begin + o];
    }
  }
}

template <WeightFormat F>
void linear_impl(const float* x, int64_t tokens, int64_t in, const void* weight, int64_t out, const float* bias,
                 float* y) {
  if (tokens <= kGemvMaxTokens) {
    // Enough rows per task to amortise scheduling, small enough to balance two to many cores.
    const int64_t grain = std::max<int64_t>(8, out / (8 * std::max(1, at::get_num_threads())));
    at::parallel_for(0, out, grain, [&](int64_t begin, int64_t end) {
      gemv_rows<F>(x, tokens, in, weight, out, bias, y, begin, end);
    });
  } else {
    at::parallel_for(0, out, 64, [&](int64_t begin, int64_t end) {
      gemm_rows<F>(x, tokens, in, weight, out, bias, y, begin, end);
    });
  }
}

}  // namespace

void linear_cpu(const float* x, int64_t tokens, int64_t in, const void* weight, WeightFormat format, int64_t out,
                const float* bias, float* y) {
  if (format == WeightFormat::F32) {
    linear_impl<WeightFormat::F32>(x, tokens, in, weight, out, bias, y);
  } else {
    linear_impl<WeightFormat::BF16>(x, tokens, in, weight, out, bias, y);
  }
}

}  // namespace izwi
