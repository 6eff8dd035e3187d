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

/// A tensor stored converted to `stored_as` (at write time, one tensor at a time) under a
/// safetensors dtype name: "F32", "BF16", "F16", or "F8_E4M3" for uint8 (kByte) tensors holding
/// e4m3fn bytes (libtorch 1.x has no FP8 type).
struct SafetensorsEntry {
  std::string name;
  at::Tensor tensor;
  at::ScalarType stored_as;
  std::string dtype;
};

void write_safetensors(const std::string& path, const std::vector<SafetensorsEntry>& entries);

}  // namespace izwi
