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

// dot(w, x_t) for up to 4 token rows at once, so each weight element is loaded once per 4 tokens.
template <WeightFormat F>
void dot_rows(const void* w_row, const float* x, int64_t in, int64_t n_tok, float* out) {
#if defined(__AVX512F__)
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t j = 0;
  for (; j + 16 <= in; j += 16) {
    __m512 w;
    if constexpr (F == WeightFormat::F32) {
      w = _mm512_loadu_ps(static_cast<const float*>(w_row) + j);
    } else {
      const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(w_row) + j));
      w = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
    }
    for (int64_t t = 0; t < n_tok; ++t) acc[t] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + t * in + j), acc[t]);
  }
  for (int64_t t = 0; t < n_tok; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
#else
  for (int64_t t = 0; t < n_tok; ++t) out[t] = 0.0f;
  int64_t j = 0;
#endif
  for (; j < in; ++j) {  // tail (and the whole row without AVX-512)
    float w;
    if constexpr (F == WeightFormat::F32) {
      w = static_cast<const float*>(w_row)[j];
    } else {
      w = bf16_to_float(static_cast<const uint16_t*>(w_row)[j]);
    }
    for (int64_t t = 0; t < n_tok; ++t) out[t] += w * x[t * in + j];
  }
}

template <WeightFormat F>
void gemv_rows(const float* x, int64_t tokens, int64_t in, const void* weight, int64_t out, const float* bias,
               float* y, int64_t row_begin, int64_t row_end) {
  constexpr size_t kElem = F == WeightFormat::F32 ? sizeof(float) : sizeof(uint16_t);
  const auto* base = static_cast<const uint8_t*>(weight);
  float partial[4];
  for (int64_t o = row_begin; o < row_end; ++o) {
    const void* w_row = base + static_cast<size_t>(o) * static_cast<size_t>(in) * kElem;
    const float b = bias != nullptr ? bias[o] : 0.0f;
    for (int64_t t0 = 0; t0 < tokens; t0 += 4) {
      const int64_t n = std::min<int64_t>(4, tokens - t0);
      dot_rows<F>(w_row, x + t0 * in, in, n, partial);
      for (int64_t t = 0; t < n; ++t) y[(t0 + t) * out + o] = partial[t] + b;
    }
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
