#pragma once
// A tensor's dtype as the CUDA launch wrappers name it (kernels/cuda/element_dtype.h); CUDA builds.

#include <ATen/ATen.h>

#include <optional>

#include "kernels/cuda/element_dtype.h"

namespace izwi {

/// Float32 or BFloat16, and Float16 where the kernel takes it (`float16_too`); nullopt otherwise.
inline std::optional<ElementDtype> cuda_element_dtype(at::ScalarType type, bool float16_too) {
  if (type == at::kFloat) return ElementDtype::Float32;
  if (type == at::kBFloat16) return ElementDtype::BFloat16;
  if (float16_too && type == at::kHalf) return ElementDtype::Float16;
  return std::nullopt;
}

}  // namespace izwi
