#pragma once
// A scratch folder removed at scope exit, plus file helpers for building (bad) inputs.

#include <cstdint>
#include <string>
#include <vector>

namespace izwi::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  /// Writes `bytes` to <dir>/<name> and returns the path.
  std::string write(const std::string& name, const std::string& bytes) const;

 private:
  std::string path_;
};

/// Bytes of a safetensors file: 8-byte little-endian length, `header`, then `data`.
std::string safetensors_bytes(const std::string& header, const std::string& data);

/// Bytes of a valid safetensors file holding float32 tensors (name, shape, values).
struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};
std::string f32_safetensors(const std::vector<F32Tensor>& tensors);

}  // namespace izwi::testing
