// The part of cuBLASLt the FP8 linear (src/kernels/cuda/fp8_gemm.cu) calls, on the host, holding
// each call to the rules NVIDIA documents for it (cuBLAS docs, cublasLtMatmul; cublasLt.h):
// - column-major layouts and transposes;
// - the FP8 requirements on Hopper: the "TN" format, compute and scale type 32F, the type
//   combinations, dimensions and leading dimensions whose bytes are multiples of 16, 16-byte
//   aligned pointers, and pointers at least as aligned as the heuristic was told;
// - device pointers for the matrices, scales, bias and workspace, host pointers for alpha and beta
//   (the default pointer mode);
// - the outer-vector scale mode of A and B (cuBLAS 12.9+: a float32 per row of D for A, per column
//   for B) and the bias epilogue.
// A call a real cuBLASLt would refuse is refused, so the FP8 linear's glue is checked without a
// GPU; the arithmetic (float sums of the decoded operands) is the specification's, not a kernel's.

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "cuda_emu.h"

struct cublasLtContext {
  int unused = 0;
};

namespace {

#if CUBLAS_VERSION >= 120900
constexpr int32_t kScalarScale = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
constexpr int32_t kOuterVectorScale = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
#else
constexpr int32_t kScalarScale = 0, kOuterVectorScale = -1;  // no scale modes before cuBLAS 12.9
#endif

struct MatmulDesc {
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  std::array<const void*, 4> scales{};                             // A, B, C, D
  std::array<int32_t, 2> scale_modes{kScalarScale, kScalarScale};  // A, B
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
};

struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};

struct Preference {
  uint64_t max_workspace = 0;
  std::array<uint32_t, 4> min_alignment{256, 256, 256, 256};  // A, B, C, D: cuBLASLt's default
};

template <typename T, typename Opaque>
T* unwrap(Opaque* opaque) {
  return reinterpret_cast<T*>(opaque);
}

bool is_fp8(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }

size_t element_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
      return 1;
    case CUDA_R_16BF:
    case CUDA_R_16F:
      return 2;
    case CUDA_R_32F:
      return 4;
    default:
      return 0;
  }
}

float load(const void* base, cudaDataType_t t, size_t i) {
  switch (t) {
    case CUDA_R_8F_E4M3:
      return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(base)[i]);
    case CUDA_R_8F_E5M2:
      return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(base)[i]);
    case CUDA_R_16BF:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    case CUDA_R_16F:
      return __half2float(static_cast<const __half*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}

void store(void* base, cudaDataType_t t, size_t i, float v) {
  switch (t) {
    case CUDA_R_16BF:
      static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
      break;
    case CUDA_R_16F:
      static_cast<__half*>(base)[i] = __float2half_rn(v);
      break;
    default:
      static_cast<float*>(base)[i] = v;
  }
}

uint32_t alignment(const void* p) {
  uint32_t a = 256;
  while (a > 1 && reinterpret_cast<uintptr_t>(p) % a != 0) a /= 2;
  return a;
}

// The bytes a column-major matrix spans.
size_t span_bytes(const Layout& l) {
  return l.cols == 0 ? 0 : ((l.cols - 1) * static_cast<size_t>(l.ld) + l.rows) * element_bytes(l.type);
}

// Whether cuBLASLt takes D = op(A) op(B) (C) as described; the FP8 rules where A or B is FP8.
// D = C here (the in-place form the FP8 linear uses); this emulation supports no other.
bool supported(const MatmulDesc& op, const Layout& a, const Layout& b, const Layout& c, const Layout& d,
               const Preference& pref) {
  for (const Layout* l : {&a, &b, &c, &d}) {
    if (element_bytes(l->type) == 0 || l->ld < static_cast<int64_t>(l->rows) || l->rows == 0) return false;
  }
  const uint64_t m = op.transa == CUBLAS_OP_N ? a.rows : a.cols, k = op.transa == CUBLAS_OP_N ? a.cols : a.rows;
  const uint64_t kb = op.transb == CUBLAS_OP_N ? b.rows : b.cols, n = op.transb == CUBLAS_OP_N ? b.cols : b.rows;
  if (k != kb || d.rows != m || d.cols != n || c.rows != m || c.cols != n || c.type != d.type) return false;
  if (op.epilogue != CUBLASLT_EPILOGUE_DEFAULT && op.epilogue != CUBLASLT_EPILOGUE_BIAS) return false;
  for (const int32_t mode : op.scale_modes) {
    if (mode != kScalarScale && mode != kOuterVectorScale) return false;
  }
  // Outer-vector scaling: A's and B's modes both set to it, and no D scale (the cuBLAS docs).
  const bool outer_vector = op.scale_modes[0] == kOuterVectorScale || op.scale_modes[1] == kOuterVectorScale;
  if (outer_vector && (op.scale_modes[0] != op.scale_modes[1] || op.scales[3] != nullptr)) return false;
  if (!is_fp8(a.type) && !is_fp8(b.type)) {
    return a.type == b.type && op.compute == CUBLAS_COMPUTE_32F && !outer_vector;
  }
  // "To use FP8 kernels, the following set of requirements must be satisfied": TN, compute 32F,
  // scale type 32F, and the type combinations of the FP8 table (E5M2 x E5M2 is not one).
  if (op.transa != CUBLAS_OP_T || op.transb != CUBLAS_OP_N) return false;
  if (op.compute != CUBLAS_COMPUTE_32F || op.scale_type != CUDA_R_32F) return false;
  if (!is_fp8(a.type) || !is_fp8(b.type) || (a.type == CUDA_R_8F_E5M2 && b.type == CUDA_R_8F_E5M2)) return false;
  const bool d_ok = d.type == CUDA_R_32F || d.type == CUDA_R_16BF || d.type == CUDA_R_16F;
  if (!d_ok) return false;  // FP8 outputs (with a D scale) are not emulated
  // The dimensions and leading dimensions, in bytes, multiples of 16 (the Tensor Core rules the FP8
  // kernels require), and pointers at least 16-byte aligned.
  const size_t sa = element_bytes(a.type), sb = element_bytes(b.type), sc = element_bytes(c.type);
  const size_t sd = element_bytes(d.type);
  if ((op.transa == CUBLAS_OP_N ? m : k) * sa % 16 != 0 || (op.transb == CUBLAS_OP_N ? k : n) * sb % 16 != 0 ||
      m * sc % 16 != 0 || a.ld * sa % 16 != 0 || b.ld * sb % 16 != 0 || c.ld * sc % 16 != 0 || d.ld * sd % 16 != 0) {
    return false;
  }
  for (const uint32_t align : pref.min_alignment) {
    if (align < 16) return false;
  }
  return true;
}

// The bias vector's type: D's, but bf16 for an FP8 product into float32 (cuBLASLt's FP8 table).
cudaDataType_t bias_type(const Layout& a, const Layout& d) {
  return is_fp8(a.type) && d.type == CUDA_R_32F ? CUDA_R_16BF : d.type;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale_type) {
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new MatmulDesc{compute, scale_type});
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete unwrap<MatmulDesc>(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  MatmulDesc& d = *unwrap<MatmulDesc>(desc);
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
      if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &d.transa : &d.transb, buf, size);
      return CUBLAS_STATUS_SUCCESS;
#if CUBLAS_VERSION >= 120900
    case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
    case CUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&d.scale_modes[attr - CUBLASLT_MATMUL_DESC_A_SCALE_MODE], buf, size);
      return CUBLAS_STATUS_SUCCESS;
#endif
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&d.epilogue, buf, size);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      if (size != sizeof(void*)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&d.bias, buf, size);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
      if (size != sizeof(void*)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&d.scales[attr - CUBLASLT_MATMUL_DESC_A_SCALE_POINTER], buf, size);
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;  // an attribute this emulation does not model
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{type, rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete unwrap<Layout>(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(new Preference);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete unwrap<Preference>(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
  Preference& p = *unwrap<Preference>(pref);
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&p.max_workspace, buf, size);
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
      std::memcpy(&p.min_alignment[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf, size);
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  *returned = 0;
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  const Preference& p = *unwrap<Preference>(pref);
  if (!supported(*unwrap<MatmulDesc>(op), *unwrap<Layout>(a), *unwrap<Layout>(b), *unwrap<Layout>(c),
                 *unwrap<Layout>(d), p)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  results[0] = {};
  // The algorithm remembers the alignments it was chosen for: a matmul given less aligned pointers fails.
  std::memcpy(results[0].algo.data, p.min_alignment.data(), sizeof(p.min_alignment));
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t op_desc, const void* alpha, const void* a_data,
                              cublasLtMatrixLayout_t a_desc, const void* b_data, cublasLtMatrixLayout_t b_desc,
                              const void* beta, const void* c_data, cublasLtMatrixLayout_t c_desc, void* d_data,
                              cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cudaStream_t) {
  const MatmulDesc& op = *unwrap<MatmulDesc>(op_desc);
  const Layout &a = *unwrap<Layout>(a_desc), &b = *unwrap<Layout>(b_desc), &c = *unwrap<Layout>(c_desc),
               &d = *unwrap<Layout>(d_desc);
  Preference chosen;
  if (algo != nullptr) std::memcpy(chosen.min_alignment.data(), algo->data, sizeof(chosen.min_alignment));
  if (!supported(op, a, b, c, d, chosen)) return CUBLAS_STATUS_NOT_SUPPORTED;
  // Matrices, scales and workspace on the device; alpha and beta on the host (pointer mode host).
  const std::array<std::pair<const void*, const Layout*>, 4> matrices{
      {{a_data, &a}, {b_data, &b}, {c_data, &c}, {d_data, &d}}};
  for (size_t i = 0; i < matrices.size(); ++i) {
    const auto& [data, layout] = matrices[i];
    if (!izwi_emu::device_range(data, span_bytes(*layout)) || alignment(data) < chosen.min_alignment[i]) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  const uint64_t m = d.rows, n = d.cols, k = op.transa == CUBLAS_OP_N ? a.cols : a.rows;
  // A scalar scale is one float; an outer vector one per row of D (A's) or per column (B's).
  const std::array<uint64_t, 4> scale_floats{op.scale_modes[0] == kOuterVectorScale ? m : 1,
                                             op.scale_modes[1] == kOuterVectorScale ? n : 1, 1, 1};
  for (size_t i = 0; i < op.scales.size(); ++i) {
    if (op.scales[i] == nullptr) {
      if (scale_floats[i] > 1) return CUBLAS_STATUS_INVALID_VALUE;  // a vector mode needs its vector
    } else if (!izwi_emu::device_range(op.scales[i], scale_floats[i] * sizeof(float))) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
  }
  const bool bias = op.epilogue == CUBLASLT_EPILOGUE_BIAS;
  if (bias && !izwi_emu::device_range(op.bias, m * element_bytes(bias_type(a, d)))) return CUBLAS_STATUS_INVALID_VALUE;
  if (workspace_bytes > 0 && !izwi_emu::device_range(workspace, workspace_bytes)) return CUBLAS_STATUS_INVALID_VALUE;
  if (izwi_emu::device_range(alpha, sizeof(float)) || izwi_emu::device_range(beta, sizeof(float))) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  // Element `index` of operand `which`'s scale (element 0 of a scalar one; 1 where none is set).
  const auto scale_of = [&](size_t which, uint64_t index) {
    if (op.scales[which] == nullptr) return 1.0f;
    return static_cast<const float*>(op.scales[which])[scale_floats[which] > 1 ? index : 0];
  };
  const float alpha_v = *static_cast<const float*>(alpha), beta_v = *static_cast<const float*>(beta);
  const float c_scale = scale_of(2, 0);
  for (uint64_t j = 0; j < n; ++j) {
    for (uint64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (uint64_t p = 0; p < k; ++p) {
        const size_t ai = op.transa == CUBLAS_OP_N ? i + p * a.ld : p + i * a.ld;
        const size_t bi = op.transb == CUBLAS_OP_N ? p + j * b.ld : j + p * b.ld;
        sum += load(a_data, a.type, ai) * load(b_data, b.type, bi);
      }
      float v = alpha_v * scale_of(0, i) * scale_of(1, j) * sum;
      if (beta_v != 0.0f) v += beta_v * c_scale * load(c_data, c.type, i + j * c.ld);
      if (bias) v += load(op.bias, bias_type(a, d), i);
      store(d_data, d.type, i + j * d.ld, v);
    }
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
