#pragma once
// Linear layers over weights packed once, at load, into the panel layout of panel_kernels.h:
// y[T, out] = x[T, in] * W^T (+ bias) at any T, from one token (a stream through memory) to a
// prefill chunk (compute bound), with float32 or bfloat16 weights.

#include <cstdint>

#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {

// Every function takes the kernel variant whose layout the packed matrix has; the engine always
// uses active_panel_kernels(), tests name each supported variant.

/// Elements of the packed copy of an [out, in] matrix (out rounded up to whole panels, in to whole
/// column groups).
int64_t packed_elements(int64_t out, int64_t in, WeightFormat format,
                        const PanelKernels& kernels = active_panel_kernels());

/// Packs `weight` (out x in elements of `format`, row-major) into `packed` (packed_elements of
/// the same format).
void pack_panels(const void* weight, WeightFormat format, int64_t out, int64_t in, void* packed,
                 const PanelKernels& kernels = active_panel_kernels());

/// y = x W^T (+ bias) with W packed by pack_panels, x and y where their strides say (a
/// convolution's inputs and channels-first outputs in place). Uses libtorch's thread pool.
void linear_packed_cpu(const PanelInputs& x, int64_t tokens, int64_t in, const void* packed, WeightFormat format,
                       int64_t out, const float* bias, const PanelOutputs& y,
                       const PanelKernels& kernels = active_panel_kernels());

/// The same for row-major x [tokens, in] and y [tokens, out].
void linear_packed_cpu(const float* x, int64_t tokens, int64_t in, const void* packed, WeightFormat format, int64_t out,
                       const float* bias, float* y, const PanelKernels& kernels = active_panel_kernels());

/// Rows `ids` of the packed matrix as float32 (an embedding lookup in a table packed for the
/// tied output head): dst [n, in].
void gather_packed_rows(const void* packed, WeightFormat format, int64_t in, const int64_t* ids, int64_t n, float* dst,
                        const PanelKernels& kernels = active_panel_kernels());

}  // namespace izwi
