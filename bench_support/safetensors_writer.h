#pragma once
// Writes tensors to a safetensors file (the layout parse_safetensors accepts: header padded to
// 8 bytes, tensors packed in order).

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace izwi {

/// Stores every tensor converted to `dtype` (float32, bfloat16 or float16). Throws naming the
/// path when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                       at::ScalarType dtype);

}  // namespace izwi
