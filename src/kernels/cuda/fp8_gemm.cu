#include <cstdint>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fp8_gemm_cuda.h"
#include "kernels/cuda/launch_grid.h"

namespace izwi {

namespace {

constexpr const char* kName = "fp8_linear_cuda";

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(kName) + ": " + what + ": cuBLASLt status " +
                             std::to_string(static_cast<int>(status)));
  }
}

// y[t, o] = acc[t, o] * x_scales[t] * w_scales[o] + bias[o], rounded once to bf16.
__global__ void scale_kernel(const float* __restrict__ acc, const float* __restrict__ x_scales,
                             const float* __restrict__ w_scales, const __nv_bfloat16* __restrict__ bias,
                             __nv_bfloat16* __restrict__ y, int64_t tokens, int64_t out) {
  const int64_t n = tokens * out;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i % out;
    float v = acc[i] * x_scales[i / out] * w_scales[o];
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

void check_args(const Fp8LinearArgs& a) {
  require(a.tokens >= 0 && a.out > 0 && a.in > 0, kName, "tokens >= 0, out > 0 and in > 0");
  require(a.out % 16 == 0 && a.in % 16 == 0, kName, "out and in must be multiples of 16 (cuBLASLt's FP8 dimensions)");
  require(alignment(a.x) >= 16 && alignment(a.w) >= 16, kName, "x and w must be 16-byte aligned");
}

// One product's descriptors, destroyed with it: the TN FP8 GEMM into D [out, tokens] of `d_type`
// at `d` (C is D, beta 0), the heuristic told every operand's alignment.
struct LtMatmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;

  LtMatmul(const Fp8LinearArgs& args, cudaDataType_t d_type, const void* d_data) {
    check_lt(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul descriptor");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    set(CUBLASLT_MATMUL_DESC_TRANSA, transpose);
    set(CUBLASLT_MATMUL_DESC_TRANSB, none);
    check_lt(cublasLtMatrixLayoutCreate(&a, CUDA_R_8F_E4M3, args.in, args.out, args.in), "A layout");
    check_lt(cublasLtMatrixLayoutCreate(&b, CUDA_R_8F_E4M3, args.in, args.tokens, args.in), "B layout");
    check_lt(cublasLtMatrixLayoutCreate(&d, d_type, args.out, args.tokens, args.out), "D layout");
    check_lt(cublasLtMatmulPreferenceCreate(&preference), "preference");
    const uint64_t workspace = args.lt_workspace_bytes;
    check_lt(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                  sizeof(workspace)),
             "workspace preference");
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment(args.w)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment(args.x)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment(d_data)},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment(d_data)}};
    for (const auto& [attribute, bytes] : alignments) {
      check_lt(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &bytes, sizeof(bytes)),
               "alignment preference");
    }
  }
  ~LtMatmul() {
    if (preference != nullptr) cublasLtMatmulPreferenceDestroy(preference);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  template <typename T>
  cublasStatus_t try_set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    return cublasLtMatmulDescSetAttribute(op, attribute, &value, sizeof(value));
  }
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attribute, const T& value) {
    check_lt(try_set(attribute, value), "matmul attribute");
  }

  /// The heuristic's first algorithm, or false where it has none.
  bool find(cublasLtHandle_t handle, cublasLtMatmulHeuristicResult_t& result) {
    int found = 0;
    return cublasLtMatmulAlgoGetHeuristic(handle, op, a, b, d, d, preference, 1, &result, &found) ==
               CUBLAS_STATUS_SUCCESS &&
           found > 0;
  }

  cublasStatus_t run(cublasLtHandle_t handle, const Fp8LinearArgs& args,
                     const cublasLtMatmulHeuristicResult_t& algorithm, void* d_data, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(handle, op, &alpha, args.w, a, args.x, b, &beta, d_data, d, d_data, d, &algorithm.algo,
                          args.lt_workspace, args.lt_workspace_bytes, stream);
  }
};

}  // namespace

bool fp8_scaled_gemm_cuda(cublasLtHandle_t handle, const Fp8LinearArgs& args, cudaStream_t stream) {
  check_args(args);
#if CUBLAS_VERSION < 120900
  (void)handle;
  (void)stream;
  return false;  // the outer-vector scale mode came with cuBLAS 12.9
#else
  if (args.tokens == 0) return true;
  if (alignment(args.y) < 16) return false;
  LtMatmul mm(args, CUDA_R_16BF, args.y);
  // A's scale vector runs along D's rows (out), B's along its columns (tokens). A cuBLASLt without
  // the mode (before 12.9) refuses the attribute; one without an algorithm for it, the heuristic.
  const int32_t outer_vector = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  if (mm.try_set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, outer_vector) != CUBLAS_STATUS_SUCCESS ||
      mm.try_set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, outer_vector) != CUBLAS_STATUS_SUCCESS) {
    return false;
  }
  mm.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(args.w_scales));
  mm.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(args.x_scales));
  if (args.bias != nullptr) {
    // The bias is D's type (bf16), added before D's rounding; the heuristic reads its alignment.
    mm.set(CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(CUBLASLT_EPILOGUE_BIAS));
    mm.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(args.bias));
  }
  cublasLtMatmulHeuristicResult_t algorithm = {};
  if (!mm.find(handle, algorithm)) return false;
  // A combination the heuristic let through may still be refused by the call itself (cublasLt.h:
  // an unsupported scale combination makes cublasLtMatmul return INVALID_VALUE); nothing ran then.
  const cublasStatus_t status = mm.run(handle, args, algorithm, args.y, stream);
  if (status == CUBLAS_STATUS_INVALID_VALUE || status == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  check_lt(status, "matmul");
  return true;
#endif
}

void fp8_gemm_then_scale_cuda(cublasLtHandle_t handle, const Fp8LinearArgs& args, float* workspace,
                              cudaStream_t stream) {
  check_args(args);
  require(alignment(workspace) >= 16, kName, "the workspace must be 16-byte aligned");
  if (args.tokens == 0) return;
  LtMatmul mm(args, CUDA_R_32F, workspace);
  cublasLtMatmulHeuristicResult_t algorithm = {};
  require(mm.find(handle, algorithm), kName,
          "cuBLASLt has no FP8 algorithm for this shape on this device (Hopper or newer needed)");
  check_lt(mm.run(handle, args, algorithm, workspace, stream), "matmul");
  constexpr int kThreads = 256;
  scale_kernel<<<grid_stride_blocks(args.tokens * args.out, kThreads), kThreads, 0, stream>>>(
      workspace, args.x_scales, args.w_scales, args.bias, args.y, args.tokens, args.out);
  check_launch("scale_kernel");
}

}  // namespace izwi
