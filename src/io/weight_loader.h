#pragma once
// Loads a Hugging Face checkpoint's tensors (model.safetensors, or shards listed in
// model.safetensors.index.json), converting floating-point tensors to the compute dtype.
// Every tensor must be taken or explicitly skipped: finish() reports the rest by name.

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace izwi {

class WeightLoader {
 public:
  /// Opens the checkpoint in `model_dir`; NotFound if it has no safetensors weights.
  WeightLoader(const std::string& model_dir, at::ScalarType dtype, at::Device device);

  bool contains(const std::string& name) const;
  /// The tensor converted to the compute dtype and device. Throws naming the file and tensor
  /// when it is missing or its shape differs from `shape`.
  at::Tensor take(const std::string& name, const std::vector<int64_t>& shape);
  /// Like take() but keeps the stored dtype (e.g. integer buffers); no conversion.
  at::Tensor take_as_stored(const std::string& name, const std::vector<int64_t>& shape);
  /// Marks a tensor as deliberately unused (e.g. a tied lm_head stored anyway).
  void skip(const std::string& name);
  /// Throws InvalidFormat listing tensors that were neither taken nor skipped.
  void finish() const;

  const std::string& model_dir() const { return model_dir_; }
  at::ScalarType dtype() const { return dtype_; }
  at::Device device() const { return device_; }

 private:
  struct Location {
    const SafetensorsFile* file;
    const StTensorInfo* info;
  };
  Location locate(const std::string& name, const std::vector<int64_t>& shape) const;
  at::Tensor read(const Location& loc) const;

  std::string model_dir_;
  at::ScalarType dtype_;
  at::Device device_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Location> tensors_;
  std::set<std::string> used_;
};

/// Parses a compute dtype name ("float32", "bfloat16", "float16"); InvalidArgument otherwise.
at::ScalarType parse_dtype(const std::string& name);

}  // namespace izwi
