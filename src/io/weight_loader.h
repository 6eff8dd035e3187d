#pragma once
// Loads a Hugging Face checkpoint's tensors (model.safetensors, shards listed in
// model.safetensors.index.json, or one named .safetensors file). Every stored tensor must be taken or explicitly
// skipped: finish() reports the rest by name.

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "io/weight_source.h"

namespace izwi {

class WeightLoader final : public WeightSource {
 public:
  /// Opens the checkpoint in `model_dir` (a folder, or a .safetensors file); NotFound if it has no
  /// safetensors weights.
  WeightLoader(const std::string& model_dir, at::ScalarType compute_dtype, at::ScalarType weight_dtype,
               const at::Device& device);

  bool contains(const std::string& name) const override;
  void skip(const std::string& name) override;
  /// Skips every stored tensor whose name starts with `prefix` (a part of a checkpoint another
  /// component reads, e.g. a codec's encoder when only its decoder is built).
  void skip_prefix(const std::string& prefix);
  /// Skips every stored tensor whose name does not start with `prefix`.
  void skip_all_but(const std::string& prefix);
  void finish() const override;
  /// Files every stored tensor under `rename(stored name)` (a checkpoint written with another
  /// library's names); messages keep naming the stored tensor. InvalidFormat when two collide.
  void rename(const std::function<std::string(const std::string&)>& rename);

 protected:
  at::Tensor read(const std::string& name, const std::vector<int64_t>& shape) override;
  std::string location(const std::string& name) const override;

 private:
  struct Location {
    const SafetensorsFile* file;
    const StTensorInfo* info;
  };

  std::string model_dir_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Location> tensors_;
  std::set<std::string> used_;
};

/// Parses a dtype name ("float32", "bfloat16", "float16"); InvalidArgument naming `field` otherwise.
at::ScalarType parse_dtype(const std::string& name, const std::string& field = "dtype");

}  // namespace izwi
