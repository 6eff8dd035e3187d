#include "kernels/cpu/linear_cpu.h"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_ps, GCC bug 105593) wherever the
// reductions are inlined; the pragma must precede the first include of immintrin.h.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Each task runs Eigen on one thread; the parallelism comes from splitting rows across tasks.
#define EIGEN_DONT_PARALLELIZE
#include <ATen/Parallel.h>
#include <Eigen/Core>

#include <algorithm>
#include <vector>

#include "common/op_profile.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/simd.h"

namespace izwi {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Cache lines [line_begin, line_end) of each of `rows` (one per streamed row) to prefetch into L1
// while a dot product computes; an empty range prefetches nothing.
struct RowPrefetch {
  const char* rows[2] = {nullptr, nullptr};
  int64_t line_begin = 0, line_end = 0;
};

template <WeightFormat F>
inline float weight_at(const void* row, int64_t j) {
  if constexpr (F == WeightFormat::F32) {
    return static_cast<const float*>(row)[j];
  } else {
    return bf16_to_float(static_cast<const uint16_t*>(row)[j]);
  }
}

#if IZWI_SIMD_LANES > 0
// simd::kLanes weights starting at column j of a row, as floats.
template <WeightFormat F>
inline simd::Vec load_weights(const void* row, int64_t j) {
  if constexpr (F == WeightFormat::F32) {
    return simd::load(static_cast<const float*>(row) + j);
  } else {
    return simd::load_bf16(static_cast<const uint16_t*>(row) + j);
  }
}

// out[r * TT + t] = dot(row r, x row t) for R rows and TT tokens. Each row is read front to back;
// two rows far apart in the matrix give one core two sequential streams, which keeps more memory
// reads in flight than one (measured +8% on a decode step). Independent accumulators come from
// the rows, the tokens and, when those are few, from splitting the columns into U chunks.
template <WeightFormat F, int R, int TT>
void dot_rows(const void* const* rows, const float* x, int64_t in, float* out, const RowPrefetch& prefetch) {
  static_assert(R <= 2, "RowPrefetch names at most two rows");
  constexpr int L = simd::kLanes;
  constexpr int U = R * TT >= 4 ? 1 : 4 / (R * TT);
  // Prefetches spread evenly over this call's column steps.
  const int64_t steps = std::max<int64_t>(1, in / (L * U));
  const int64_t lines_per_step = (prefetch.line_end - prefetch.line_begin + steps - 1) / steps;
  int64_t next_line = prefetch.line_begin;
  simd::Vec acc[R][U][TT];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
#pragma GCC unroll 4
      for (int t = 0; t < TT; ++t) acc[r][u][t] = simd::zero();
    }
  }
  int64_t j = 0;
  for (; j + L * U <= in; j += L * U) {
    for (int64_t k = 0; k < lines_per_step && next_line < prefetch.line_end; ++k, ++next_line) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) _mm_prefetch(prefetch.rows[r] + next_line * 64, _MM_HINT_T0);
    }
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const simd::Vec w = load_weights<F>(rows[r], j + L * u);
#pragma GCC unroll 4
        for (int t = 0; t < TT; ++t) {
          acc[r][u][t] = simd::fmadd(w, simd::load(x + t * in + j + L * u), acc[r][u][t]);
        }
      }
    }
  }
  for (; j + L <= in; j += L) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const simd::Vec w = load_weights<F>(rows[r], j);
#pragma GCC unroll 4
      for (int t = 0; t < TT; ++t) acc[r][0][t] = simd::fmadd(w, simd::load(x + t * in + j), acc[r][0][t]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int t = 0; t < TT; ++t) {
      simd::Vec sum = acc[r][0][t];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) sum = simd::add(sum, acc[r][u][t]);
      out[r * TT + t] = simd::reduce_add(sum);
    }
  }
  // Columns past the last whole vector (rare: model widths are multiples of 16).
  for (; j < in; ++j) {
    for (int r = 0; r < R; ++r) {
      const float w = weight_at<F>(rows[r], j);
      for (int t = 0; t < TT; ++t) out[r * TT + t] += w * x[t * in + j];
    }
  }
}

#else
template <WeightFormat F, int R, int TT>
void dot_rows(const void* const* rows, const float* x, int64_t in, float* out, const RowPrefetch&) {
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < TT; ++t) {
      float sum = 0.0f;
      for (int64_t j = 0; j < in; ++j) sum += weight_at<F>(rows[r], j) * x[t * in + j];
      out[r * TT + t] = sum;
    }
  }
}
#endif

template <WeightFormat F, int R>
void dot_rows_tokens(const void* const* rows, const float* x, int64_t tokens, int64_t in, float* out,
                     const RowPrefetch& prefetch) {
  switch (tokens) {
    case 1:
      dot_rows<F, R, 1>(rows, x, in, out, prefetch);
      break;
    case 2:
      dot_rows<F, R, 2>(rows, x, in, out, prefetch);
      break;
    case 3:
      dot_rows<F, R, 3>(rows, x, in, out, prefetch);
      break;
    default:
      dot_rows<F, R, 4>(rows, x, in, out, prefetch);
      break;
  }
}

// Rows [row_begin, row_end) streamed front to back as two sequences, the range's first half
// alongside its second; tokens in groups of 4, each group reading the pair of rows again from L1.
// The next pair is prefetched while this one computes, spread over all its groups: otherwise the
// memory stream pauses during the FMAs (measured on the 100m preset's 49 matrices from DRAM:
// +12% at 4 tokens; at 8 and 16 tokens 1.7x and 1.3x the speed of 4-row x 4-token tiles).
template <WeightFormat F>
void gemv_rows(const uint8_t* base, size_t row_bytes, const float* x, int64_t tokens, int64_t in, int64_t out,
               const float* bias, float* y, int64_t row_begin, int64_t row_end) {
  constexpr int64_t kGroup = 4;
  const int64_t half = (row_end - row_begin) / 2;
  const int64_t groups = (tokens + kGroup - 1) / kGroup;
  const int64_t lines = static_cast<int64_t>(row_bytes + 63) / 64;
  float result[2 * kGroup];
  auto store = [&](int64_t o, int64_t t0, int64_t n, const float* r) {
    for (int64_t t = 0; t < n; ++t) y[(t0 + t) * out + o] = r[t] + (bias != nullptr ? bias[o] : 0.0f);
  };
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = row_begin + i, b = row_begin + half + i;
    const void* rows[2] = {base + static_cast<size_t>(a) * row_bytes, base + static_cast<size_t>(b) * row_bytes};
    RowPrefetch prefetch;
    const bool has_next = i + 1 < half;
    prefetch.rows[0] = static_cast<const char*>(rows[0]) + row_bytes;
    prefetch.rows[1] = static_cast<const char*>(rows[1]) + row_bytes;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t t0 = g * kGroup, n = std::min(kGroup, tokens - t0);
      prefetch.line_begin = has_next ? lines * g / groups : 0;
      prefetch.line_end = has_next ? lines * (g + 1) / groups : 0;
      dot_rows_tokens<F, 2>(rows, x + t0 * in, n, in, result, prefetch);
      store(a, t0, n, result);
      store(b, t0, n, result + n);
    }
  }
  if (row_begin + 2 * half < row_end) {
    const int64_t o = row_end - 1;
    const void* rows[1] = {base + static_cast<size_t>(o) * row_bytes};
    for (int64_t t0 = 0; t0 < tokens; t0 += kGroup) {
      const int64_t n = std::min(kGroup, tokens - t0);
      dot_rows_tokens<F, 1>(rows, x + t0 * in, n, in, result, RowPrefetch{});
      store(o, t0, n, result);
    }
  }
}

template <WeightFormat F>
void gemm_rows(const float* x, int64_t tokens, int64_t in, const void* weight, int64_t out, const float* bias, float* y,
               int64_t row_begin, int64_t row_end) {
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
    constexpr size_t kElem = F == WeightFormat::F32 ? sizeof(float) : sizeof(uint16_t);
    // Enough rows per task to amortise scheduling, small enough to balance two to many cores.
    const int64_t grain = std::max<int64_t>(8, out / (8 * std::max(1, at::get_num_threads())));
    at::parallel_for(0, out, grain, [&](int64_t begin, int64_t end) {
      gemv_rows<F>(static_cast<const uint8_t*>(weight), static_cast<size_t>(in) * kElem, x, tokens, in, out, bias, y,
                   begin, end);
    });
  } else {
    at::parallel_for(
        0, out, 64, [&](int64_t begin, int64_t end) { gemm_rows<F>(x, tokens, in, weight, out, bias, y, begin, end); });
  }
}

}  // namespace

void linear_cpu(const float* x, int64_t tokens, int64_t in, const void* weight, WeightFormat format, int64_t out,
                const float* bias, float* y) {
  const OpTimer timer = linear_call_timer(tokens, in, out);
  if (format == WeightFormat::F32) {
    linear_impl<WeightFormat::F32>(x, tokens, in, weight, out, bias, y);
  } else {
    linear_impl<WeightFormat::BF16>(x, tokens, in, weight, out, bias, y);
  }
}

}  // namespace izwi
