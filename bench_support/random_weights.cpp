#include "bench_support/random_weights.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <functional>

namespace izwi {

RandomWeights::RandomWeights(uint64_t seed, const at::Device& device, at::ScalarType record_dtype)
    : WeightSource(at::kFloat, at::kFloat, device), seed_(seed), record_dtype_(record_dtype) {}

at::Tensor RandomWeights::read(const std::string& name, const std::vector<int64_t>& shape) {
  at::Tensor t;
  if (shape.size() >= 2) {
    // Scaled so activations keep unit size through the layers: std = 1 / sqrt(fan_in).
    int64_t fan_in = 1;
    for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed_ ^ std::hash<std::string>{}(name));
    t = at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)) / std::sqrt(static_cast<double>(fan_in));
  } else {
    // Vectors are norm scales (ones), codebook usage counts (ones: the codec divides by them) or
    // biases and other scales (zeros).
    const bool is_one = name.find("norm") != std::string::npos || name.find("cluster_usage") != std::string::npos;
    t = is_one ? at::ones(shape, at::kFloat) : at::zeros(shape, at::kFloat);
  }
  tensors_.emplace_back(name, t.to(record_dtype_));
  return tensors_.back().second;
}

}  // namespace izwi
