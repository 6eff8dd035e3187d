#pragma once
// Row indices or ids gathered on the host, as an int64 tensor on the device that uses them.

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace izwi {

inline at::Tensor index_tensor(const std::vector<int64_t>& ids, const at::Device& device) {
  return at::tensor(ids, at::TensorOptions().dtype(at::kLong)).to(device);
}

}  // namespace izwi
