#pragma once
// Safetensors entries as libtorch tensors (kept apart from the parser, which needs no libtorch).

#include <ATen/ATen.h>

#include "io/safetensors.h"

namespace izwi {

at::ScalarType to_scalar_type(StDType dtype);

/// A CPU tensor holding a copy of the entry's data in its stored dtype. Copying, rather than
/// wrapping the map, because safetensors offsets need not be aligned for the element type.
at::Tensor read_tensor(const SafetensorsFile& file, const StTensorInfo& info);

}  // namespace izwi
