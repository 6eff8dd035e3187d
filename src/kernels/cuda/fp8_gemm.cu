#include <algorithm>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fp8_gemm_cuda.h"

namespace izwi {

namespace {

constexpr float kE4m3Max = 448.0f;

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("fp8_linear_cuda: ") + what + ": cuBLASLt status " +
                             std::to_string(static_cast<int>(status)));
  }
}

// max |x| over the tensor: a grid-stride max per thread, a warp reduction, one atomic per warp
// (non-negative floats order as their bits do, so an integer atomicMax works).
__global__ void amax_kernel(const __nv_bfloat16* __restrict__ x, int64_t n, float* amax) {
  float m = 0.0f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    m = fmaxf(m, fabsf(__bfloat162float(x[i])));
  }
  for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if ((threadIdx.x & 31) == 0) atomicMax(reinterpret_cast<int*>(amax), __float_as_int(m));
}

__global__ void scale_from_amax_kernel(const float* amax, float* scale) {
  *scale = *amax > 0.0f ? *amax / kE4m3Max : 1.0f;
}

__global__ void quantize_kernel(const __nv_bfloat16* __restrict__ x, int64_t n, const float* scale,
                                __nv_fp8_e4m3* __restrict__ out) {
  const float inverse = 1.0f / *scale;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // __nv_fp8_e4m3's constructor rounds to nearest even and saturates (__NV_SATFINITE).
    out[i] = __nv_fp8_e4m3(__bfloat162float(x[i]) * inverse);
  }
}

unsigned grid_for(int64_t n, int threads) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + threads - 1) / threads, 4096)));
}

// y[t, o] = acc[t, o] * w_scale[o or 0] + bias[o], rounded once to bf16.
__global__ void scale_columns_kernel(const float* __restrict__ acc, const float* __restrict__ w_scale, bool per_channel,
                                     const __nv_bfloat16* __restrict__ bias, __nv_bfloat16* __restrict__ y,
                                     int64_t tokens, int64_t out) {
  const int64_t n = tokens * out;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i % out;
    float v = acc[i] * w_scale[per_channel ? o : 0];
    if (bias != nullptr) v += __bfloat162float(bias[o]);
    y[i] = __float2bfloat16_rn(v);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The descriptors of one product, destroyed with it.
struct LtMatmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~LtMatmul() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

}  // namespace

void quantize_fp8_dynamic_cuda(const __nv_bfloat16* x, int64_t n, __nv_fp8_e4m3* out, float* scale, float* amax_scratch,
                               cudaStream_t stream) {
  require(n >= 0, "quantize_fp8_dynamic_cuda", "negative element count");
  check_cuda(cudaMemsetAsync(amax_scratch, 0, sizeof(float), stream), "quantize_fp8_dynamic_cuda: zero amax");
  constexpr int kThreads = 256;
  if (n > 0) {
    amax_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n, amax_scratch);
    check_launch("amax_kernel");
  }
  scale_from_amax_kernel<<<1, 1, 0, stream>>>(amax_scratch, scale);
  check_launch("scale_from_amax_kernel");
  quantize_fp8_static_cuda(x, n, scale, out, stream);
}

void quantize_fp8_static_cuda(const __nv_bfloat16* x, int64_t n, const float* scale, __nv_fp8_e4m3* out,
                              cudaStream_t stream) {
  require(n >= 0, "quantize_fp8_static_cuda", "negative element count");
  if (n == 0) return;
  constexpr int kThreads = 256;
  quantize_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, n, scale, out);
  check_launch("quantize_kernel");
}

void fp8_linear_cuda(cublasLtHandle_t handle, const __nv_fp8_e4m3* x, const float* x_scale, const __nv_fp8_e4m3* w,
                     const float* w_scale, bool w_scale_per_channel, const __nv_bfloat16* bias, __nv_bfloat16* y,
                     int64_t tokens, int64_t out, int64_t in, float* workspace, void* lt_workspace,
                     size_t lt_workspace_bytes, cudaStream_t stream) {
  constexpr const char* kName = "fp8_linear_cuda";
  require(tokens >= 0 && out > 0 && in > 0, kName, "tokens >= 0, out > 0 and in > 0");
  require(in % 16 == 0, kName, "in must be a multiple of 16 (cuBLASLt FP8 leading dimensions)");
  require(aligned16(x) && aligned16(w) && aligned16(workspace), kName, "x, w and workspace must be 16-byte aligned");
  if (tokens == 0) return;

  // Column-major view: D [out, tokens] = op(A) B with A = w ([in, out] column-major, transposed)
  // and B = x ([in, tokens]); D [out, tokens] column-major is y [tokens, out] row-major.
  LtMatmul mm;
  check_lt(cublasLtMatmulDescCreate(&mm.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), "TRANSA");
  check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)), "TRANSB");
  // x's scale multiplies the product; w's is applied per output channel afterwards.
  check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &x_scale, sizeof(x_scale)),
           "B_SCALE_POINTER");
  check_lt(cublasLtMatrixLayoutCreate(&mm.a, CUDA_R_8F_E4M3, in, out, in), "A layout");
  check_lt(cublasLtMatrixLayoutCreate(&mm.b, CUDA_R_8F_E4M3, in, tokens, in), "B layout");
  check_lt(cublasLtMatrixLayoutCreate(&mm.d, CUDA_R_32F, out, tokens, out), "D layout");
  check_lt(cublasLtMatmulPreferenceCreate(&mm.preference), "preference");
  check_lt(cublasLtMatmulPreferenceSetAttribute(mm.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &lt_workspace_bytes, sizeof(lt_workspace_bytes)),
           "workspace preference");
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  check_lt(cublasLtMatmulAlgoGetHeuristic(handle, mm.op, mm.a, mm.b, mm.d, mm.d, mm.preference, 1, &heuristic, &found),
           "algorithm heuristic");
  require(found > 0, kName, "cuBLASLt has no FP8 algorithm for this shape on this device (Hopper or newer needed)");
  const float alpha = 1.0f, beta = 0.0f;
  check_lt(cublasLtMatmul(handle, mm.op, &alpha, w, mm.a, x, mm.b, &beta, workspace, mm.d, workspace, mm.d,
                          &heuristic.algo, lt_workspace, lt_workspace_bytes, stream),
           "matmul");
  constexpr int kThreads = 256;
  scale_columns_kernel<<<grid_for(tokens * out, kThreads), kThreads, 0, stream>>>(
      workspace, w_scale, w_scale_per_channel, bias, y, tokens, out);
  check_launch("scale_columns_kernel");
}

}  // namespace izwi
