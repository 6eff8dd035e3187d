#pragma once
// Test helpers: paths of bundled fixtures and their reference tensors.

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace izwi::testing {

/// tests/data/<name>
std::string fixture_dir(const std::string& name);

/// A fixture's name as part of a test name (gtest allows no '-'): "llama-tiny" -> "llama_tiny".
std::string fixture_test_name(std::string name);

/// All tensors of a fixture's reference.safetensors, in their stored dtype.
class ReferenceTensors {
 public:
  explicit ReferenceTensors(const std::string& fixture_name);
  at::Tensor get(const std::string& name) const;
  bool contains(const std::string& name) const;
  std::vector<int32_t> ids(const std::string& name) const;  ///< int64 tensor -> int32 ids

 private:
  std::string path_;
  std::vector<std::pair<std::string, at::Tensor>> tensors_;
};

/// Largest absolute difference between two float tensors of the same shape.
double max_abs_diff(const at::Tensor& a, const at::Tensor& b);

}  // namespace izwi::testing
