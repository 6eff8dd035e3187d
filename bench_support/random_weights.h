#pragma once
// A WeightSource that invents every tensor a model asks for (seeded, deterministic per name)
// and remembers it, so building a model from a config yields exactly the tensors its
// checkpoint must hold. The checkpoint tool writes them out; no name list is duplicated.

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "io/weight_source.h"

namespace izwi {

class RandomWeights final : public WeightSource {
 public:
  /// Tensors handed to the model are converted to `device` (use at::kMeta to keep only the
  /// recorded copies in memory); recorded copies are kept in `record_dtype`.
  RandomWeights(uint64_t seed, const at::Device& device, at::ScalarType record_dtype = at::kFloat);

  bool contains(const std::string& name) const override { return false; }
  void skip(const std::string& name) override {}
  void finish() const override {}

  /// Every tensor handed out so far, in request order, on the CPU in the record dtype.
  const std::vector<std::pair<std::string, at::Tensor>>& tensors() const { return tensors_; }

 protected:
  at::Tensor read(const std::string& name, const std::vector<int64_t>& shape) override;

 private:
  uint64_t seed_;
  at::ScalarType record_dtype_;
  std::vector<std::pair<std::string, at::Tensor>> tensors_;
};

}  // namespace izwi
