#pragma once
// Row indices or ids gathered on the host, as an int64 tensor on the device that uses them.

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace izwi {

inline at::Tensor index_tensor(const std::vector<int64_t>& ids, const at::Device& device) {
  return at::tensor(ids, at::TensorOptions().dtype(at::kLong)).to(device);
}

/// Several lists of one step in one copy: views of one int64 tensor on `device`, one per list. On
/// a CUDA device the host buffer is pinned and the copy does not wait (one copy a step, not one
/// per list).
inline std::vector<at::Tensor> index_tensors(const std::vector<const std::vector<int64_t>*>& lists,
                                             const at::Device& device) {
  int64_t total = 0;
  for (const std::vector<int64_t>* list : lists) total += static_cast<int64_t>(list->size());
  at::Tensor host = at::empty({total}, at::TensorOptions().dtype(at::kLong).pinned_memory(device.is_cuda()));
  int64_t* at = host.data_ptr<int64_t>();
  for (const std::vector<int64_t>* list : lists) at = std::copy(list->begin(), list->end(), at);
  const at::Tensor all = host.to(device, /*non_blocking=*/true);
  std::vector<at::Tensor> views;
  int64_t offset = 0;
  for (const std::vector<int64_t>* list : lists) {
    views.push_back(all.narrow(0, offset, static_cast<int64_t>(list->size())));
    offset += static_cast<int64_t>(list->size());
  }
  return views;
}

}  // namespace izwi
