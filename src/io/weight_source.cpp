#include "io/weight_source.h"

namespace izwi {

at::Tensor WeightSource::take(const std::string& name, const std::vector<int64_t>& shape) {
  return read(name, shape).to(device_, compute_dtype_).contiguous();
}

at::Tensor WeightSource::take_matrix(const std::string& name, const std::vector<int64_t>& shape) {
  return read(name, shape).to(device_, weight_dtype_).contiguous();
}

}  // namespace izwi
