#include "io/safetensors_tensor.h"

#include <cstring>

#include "common/check.h"

namespace izwi {

at::ScalarType to_scalar_type(StDType dtype) {
  switch (dtype) {
    case StDType::F64:
      return at::kDouble;
    case StDType::F32:
      return at::kFloat;
    case StDType::F16:
      return at::kHalf;
    case StDType::BF16:
      return at::kBFloat16;
    case StDType::I64:
      return at::kLong;
    case StDType::I32:
      return at::kInt;
    case StDType::I16:
      return at::kShort;
    case StDType::I8:
      return at::kChar;
    case StDType::U8:
      return at::kByte;
    case StDType::BOOL:
      return at::kBool;
    case StDType::F8_E4M3:
      return at::kByte;  // the e4m3 bits (safetensors.h)
  }
  fail(ErrorCode::Internal, "unmapped safetensors dtype");
}

at::Tensor read_tensor(const SafetensorsFile& file, const StTensorInfo& info) {
  at::Tensor t = at::empty(info.shape, at::TensorOptions().dtype(to_scalar_type(info.dtype)));
  const size_t nbytes = info.end - info.begin;
  if (nbytes > 0) std::memcpy(t.data_ptr(), file.data(info), nbytes);
  file.drop(info);  // the copy is the weight now: do not hold the file's pages too
  return t;
}

}  // namespace izwi
