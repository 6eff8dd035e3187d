#include "common/reference.h"

#include <cstring>
#include <stdexcept>

#include "io/safetensors.h"

namespace izwi::testing {

namespace {

at::ScalarType scalar_type(StDType dtype) {
  switch (dtype) {
    case StDType::F64: return at::kDouble;
    case StDType::F32: return at::kFloat;
    case StDType::F16: return at::kHalf;
    case StDType::BF16: return at::kBFloat16;
    case StDType::I64: return at::kLong;
    case StDType::I32: return at::kInt;
    case StDType::I16: return at::kShort;
    case StDType::I8: return at::kChar;
    case StDType::U8: return at::kByte;
    case StDType::BOOL: return at::kBool;
  }
  throw std::runtime_error("unknown dtype");
}

}  // namespace

std::string fixture_dir(const std::string& name) { return std::string(IZWI_TEST_DATA_DIR) + "/" + name; }

ReferenceTensors::ReferenceTensors(const std::string& fixture_name)
    : path_(fixture_dir(fixture_name) + "/reference.safetensors") {
  SafetensorsFile file(path_);
  for (const StTensorInfo& info : file.tensors()) {
    at::Tensor t = at::empty(info.shape, at::TensorOptions().dtype(scalar_type(info.dtype)));
    if (info.end > info.begin) std::memcpy(t.data_ptr(), file.data(info), info.end - info.begin);
    tensors_.emplace_back(info.name, t);
  }
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
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

}  // namespace izwi::testing
