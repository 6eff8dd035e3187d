#include <cstdint>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fp8_gemm_cuda.h"
#include "kernels/cuda/launch_grid.h"

namespace izwi {

namespace {

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("fp8_linear_cuda: ") + what + ": cuBLASLt status " +
                             std::to_string(static_cast<int>(status)));
  }
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

// The largest power of two up to 256 that divides p's address. cuBLASLt's heuristic assumes 256-byte
// aligned operands unless told otherwise, and may pick a kernel that faults on a less aligned one.
uint32_t alignment(const void* p) {
  uint32_t a = 256;
  while (a > 1 && reinterpret_cast<uintptr_t>(p) % a != 0) a /= 2;
  return a;
}

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

void fp8_linear_cuda(cublasLtHandle_t handle, const __nv_fp8_e4m3* x, const float* x_scale, const __nv_fp8_e4m3* w,
                     const float* w_scale, bool w_scale_per_channel, const __nv_bfloat16* bias, __nv_bfloat16* y,
                     int64_t tokens, int64_t out, int64_t in, float* workspace, void* lt_workspace,
                     size_t lt_workspace_bytes, cudaStream_t stream) {
  constexpr const char* kName = "fp8_linear_cuda";
  require(tokens >= 0 && out > 0 && in > 0, kName, "tokens >= 0, out > 0 and in > 0");
  require(out % 16 == 0 && in % 16 == 0, kName, "out and in must be multiples of 16 (cuBLASLt's FP8 dimensions)");
  const uint32_t align_a = alignment(w), align_b = alignment(x), align_d = alignment(workspace);
  require(align_a >= 16 && align_b >= 16 && align_d >= 16, kName, "x, w and workspace must be 16-byte aligned");
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
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align_d}};
  for (const auto& [attribute, bytes] : alignments) {
    check_lt(cublasLtMatmulPreferenceSetAttribute(mm.preference, attribute, &bytes, sizeof(bytes)),
             "alignment preference");
  }
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
  scale_columns_kernel<<<grid_stride_blocks(tokens * out, kThreads), kThreads, 0, stream>>>(
      workspace, w_scale, w_scale_per_channel, bias, y, tokens, out);
  check_launch("scale_columns_kernel");
}

}  // namespace izwi
