#include "common/reference.h"

#include <stdexcept>

#include "io/safetensors_tensor.h"

namespace izwi::testing {

std::string fixture_dir(const std::string& name) { return std::string(IZWI_TEST_DATA_DIR) + "/" + name; }

std::string fixture_test_name(std::string name) {
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

ReferenceTensors::ReferenceTensors(const std::string& fixture_name)
    : path_(fixture_dir(fixture_name) + "/reference.safetensors") {
  SafetensorsFile file(path_);
  for (const StTensorInfo& info : file.tensors()) tensors_.emplace_back(info.name, read_tensor(file, info));
}

bool ReferenceTensors::contains(const std::string& name) const {
  for (const auto& [n, t] : tensors_) {
    if (n == name) return true;
  }
  return false;
}

at::Tensor ReferenceTensors::get(const std::string& name) const {
  for (const auto& [n, t] : tensors_) {
    if (n == name) return t;
  }
  throw std::runtime_error(path_ + ": no tensor '" + name + "'");
}

std::vector<int32_t> ReferenceTensors::ids(const std::string& name) const {
  at::Tensor t = get(name).to(at::kLong).contiguous();
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  const int64_t* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(p[i]);
  return out;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes()) throw std::runtime_error("max_abs_diff: shapes differ");
  return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();  // any devices
}

}  // namespace izwi::testing
