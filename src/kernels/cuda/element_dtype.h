#pragma once
// The element types the CUDA launch wrappers take through untyped pointers (K/V pools, per-head
// norm weights, rotary tables), named on the host without libtorch.

namespace izwi {

enum class ElementDtype { Float32, BFloat16, Float16 };

}  // namespace izwi
