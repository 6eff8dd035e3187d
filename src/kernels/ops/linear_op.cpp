#include "kernels/ops/linear_op.h"

#include <algorithm>
#include <vector>

#include "common/check.h"
#include "common/op_profile.h"
#include "kernels/cpu/linear_cpu.h"
#include "quant/dequantize.h"
#if IZWI_WITH_CUDA
#include <cublasLt.h>
#include <cuda_fp8.h>

#include "kernels/cuda/bf16_data.h"
#include "kernels/cuda/fp8_gemm_cuda.h"
#include "kernels/cuda/fp8_quantize_cuda.h"
#include "kernels/cuda/int4_gemv_cuda.h"
#include "kernels/cuda_stream.h"
#endif

namespace izwi::ops {

at::Tensor linear(const Backend& backend, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool cpu_weight = weight.scalar_type() == at::kFloat || weight.scalar_type() == at::kBFloat16;
  if (backend.cpu_kernels() && x.is_cpu() && x.scalar_type() == at::kFloat && cpu_weight && weight.is_contiguous() &&
      (!bias.defined() || (bias.scalar_type() == at::kFloat && bias.is_contiguous()))) {
    const int64_t out_features = weight.size(0), in_features = weight.size(1);
    const at::Tensor xc = x.reshape({-1, in_features}).contiguous();
    at::Tensor y = at::empty({xc.size(0), out_features}, xc.options());
    linear_cpu(xc.data_ptr<float>(), xc.size(0), in_features, weight.data_ptr(),
               weight.scalar_type() == at::kFloat ? WeightFormat::F32 : WeightFormat::BF16, out_features,
               bias.defined() ? bias.data_ptr<float>() : nullptr, y.data_ptr<float>());
    if (x.dim() == 2) return y;
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = out_features;
    return y.view(shape);
  }
  // The CPU kernels time themselves; this times libtorch's product (cuBLAS on a GPU).
  const OpTimer timer = linear_call_timer(x.numel() / weight.size(1), weight.size(1), weight.size(0));
  return at::linear(x, weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type()), bias);
}

QuantizedKernelSupport QuantizedKernelSupport::of(const Backend& backend) {
  return {backend.cuda_kernels() && backend.dtype() == at::kBFloat16, backend.cuda_sm_version()};
}

QuantizedProduct quantized_product(const QuantizedKernelSupport& support, QuantKind kind, int64_t out, int64_t in,
                                   int64_t group_size, int64_t rows) {
  if (!support.cuda_bf16) return QuantizedProduct::Dequantized;
  if (kind == QuantKind::Int4 && in % 32 == 0 && group_size % 32 == 0 && rows <= kInt4GemvMaxRows) {
    return QuantizedProduct::Int4Gemv;
  }
  if (kind == QuantKind::Fp8E4M3 && support.sm_version >= 90 && out % 16 == 0 && in % 16 == 0)
    return QuantizedProduct::Fp8Gemm;
  return QuantizedProduct::Dequantized;
}

bool keeps_quantized(const QuantizedKernelSupport& support, const QuantizedMatrix& w) {
  return quantized_product(support, w.kind, w.out, w.in, w.group_size, 1) != QuantizedProduct::Dequantized;
}

#if IZWI_WITH_CUDA
namespace {

// cuBLASLt's handle for the FP8 GEMMs: one for the process (a handle is not tied to a stream; the
// stream goes with each call), made on first use and kept to the end.
cublasLtHandle_t lt_handle() {
  static const cublasLtHandle_t handle = [] {
    cublasLtHandle_t h = nullptr;
    if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) fail(ErrorCode::Internal, "cublasLtCreate failed");
    return h;
  }();
  return handle;
}

static_assert(kInt4GemvMaxRows % kInt4GemvMaxTokens == 0, "the GEMV's row limit is whole launches");

// cuBLASLt's own scratch per FP8 GEMM: the 32 MiB NVIDIA recommends on Hopper (PyTorch gives its
// cuBLASLt calls the same there), so no algorithm is passed over for want of it.
constexpr int64_t kLtWorkspaceBytes = int64_t{32} << 20;

at::Tensor int4_product(const at::Tensor& x, const QuantizedMatrix& w, const at::Tensor& bias) {
  const int64_t rows = x.size(0);
  Int4Weights weights;
  weights.values = w.values.data_ptr<uint8_t>();
  weights.scales = w.scales.data_ptr<float>();
  weights.zeros = w.zeros.defined() ? w.zeros.data_ptr<uint8_t>() : nullptr;
  weights.column_order = w.column_order.defined() ? w.column_order.data_ptr<int64_t>() : nullptr;
  weights.out = w.out;
  weights.in = w.in;
  weights.group_size = w.group_size;
  const int64_t scratch = static_cast<int64_t>(int4_linear_workspace_bytes(weights, rows) / sizeof(float));
  const at::Tensor workspace = at::empty({std::max<int64_t>(scratch, 1)}, x.options().dtype(at::kFloat));
  at::Tensor y = at::empty({rows, w.out}, x.options());
  int4_linear_cuda(bf16_data(x), weights, bias.defined() ? bf16_data(bias) : nullptr, bf16_data(y), rows,
                   workspace.data_ptr<float>(), current_cuda_stream());
  return y;
}

at::Tensor fp8_product(const at::Tensor& x, const QuantizedMatrix& w, const at::Tensor& bias) {
  const int64_t rows = x.size(0);
  const cudaStream_t stream = current_cuda_stream();
  const at::TensorOptions floats = x.options().dtype(at::kFloat);
  const at::Tensor xq = at::empty({rows, w.in}, x.options().dtype(at::kByte));
  const at::Tensor x_scales = at::empty({rows}, floats);
  const at::Tensor lt_workspace = at::empty({kLtWorkspaceBytes}, x.options().dtype(at::kByte));
  at::Tensor y = at::empty({rows, w.out}, x.options());
  auto* xq_data = reinterpret_cast<__nv_fp8_e4m3*>(xq.data_ptr<uint8_t>());
  quantize_fp8_rows_cuda(bf16_data(x), rows, w.in, xq_data, x_scales.data_ptr<float>(), stream);
  Fp8LinearArgs args;
  args.x = xq_data;
  args.x_scales = x_scales.data_ptr<float>();
  args.w = reinterpret_cast<const __nv_fp8_e4m3*>(w.values.data_ptr<uint8_t>());
  args.w_scales = w.scales.data_ptr<float>();  // one per output row (a per-tensor scale is written out per row)
  args.bias = bias.defined() ? bf16_data(bias) : nullptr;
  args.y = bf16_data(y);
  args.tokens = rows;
  args.out = w.out;
  args.in = w.in;
  args.lt_workspace = lt_workspace.data_ptr();
  args.lt_workspace_bytes = kLtWorkspaceBytes;
  if (!fp8_scaled_gemm_cuda(lt_handle(), args, stream)) {
    const at::Tensor workspace = at::empty({rows * w.out}, floats);
    fp8_gemm_then_scale_cuda(lt_handle(), args, workspace.data_ptr<float>(), stream);
  }
  return y;
}

}  // namespace
#endif

at::Tensor linear_quantized(const Backend& backend, const at::Tensor& x, const QuantizedMatrix& w,
                            const at::Tensor& bias) {
  IZWI_CHECK(x.size(-1) == w.in, "quantized linear: input width {} is not the matrix's {}", x.size(-1), w.in);
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = w.out;
#if IZWI_WITH_CUDA
  const int64_t rows = x.numel() / std::max<int64_t>(w.in, 1);
  const QuantizedProduct product =
      quantized_product(QuantizedKernelSupport::of(backend), w.kind, w.out, w.in, w.group_size, rows);
  if (product != QuantizedProduct::Dequantized && x.is_cuda() && x.scalar_type() == at::kBFloat16) {
    const at::Tensor xc = x.reshape({rows, w.in}).contiguous();
    const at::Tensor b = bias.defined() ? bias.to(at::kBFloat16).contiguous() : at::Tensor();
    const OpTimer timer = linear_call_timer(rows, w.in, w.out);
    const at::Tensor y = product == QuantizedProduct::Int4Gemv ? int4_product(xc, w, b) : fp8_product(xc, w, b);
    return y.view(shape);
  }
#endif
  // No quantized kernel here (a prefill's many rows, or no device kernels): one GEMM on the
  // dequantized matrix, made for this call and freed after it.
  return linear(backend, x, dequantize(w).to(x.scalar_type()), bias).view(shape);
}

}  // namespace izwi::ops
