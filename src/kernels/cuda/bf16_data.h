#pragma once
// The data of a bf16 libtorch tensor as the CUDA launch wrappers take it. For the dispatch points
// only: the .cu files stay free of libtorch.

#include <ATen/ATen.h>
#include <cuda_bf16.h>

namespace izwi {

static_assert(sizeof(at::BFloat16) == sizeof(__nv_bfloat16), "both are the top 16 bits of a float32");

/// data_ptr<at::BFloat16>() (which checks the dtype) as CUDA's bf16: the same bits.
inline __nv_bfloat16* bf16_data(const at::Tensor& t) {
  return reinterpret_cast<__nv_bfloat16*>(t.data_ptr<at::BFloat16>());
}

}  // namespace izwi
