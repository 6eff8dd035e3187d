// Fuzz target: a quantized linear layer l [16, 64] read from any safetensors file, under the
// quantization_config the first byte picks (GPTQ v1 act-order, GPTQ v2 per channel, AWQ GEMM,
// compressed-tensors FP8), either dequantizes into float32 weights of that shape or raises
// izwi::Error naming what is wrong. Nothing else may happen (a libtorch error is a crash here).
// Seeds: scripts/make_quantized_fixtures.py --fuzz-corpus.

#include <ATen/ATen.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "io/weight_loader.h"
#include "izwi/errors.h"

namespace {

const char* const kConfigs[] = {
    R"({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": true, "sym": false}})",
    R"({"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": -1, "checkpoint_format": "gptq_v2"}})",
    R"({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemm"}})",
    R"({"quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups":
        {"g": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}})",
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = izwi::fuzz::scratch_dir("quantized_checkpoint");
  if (size < 1) return 0;
  const std::string config = kConfigs[data[0] % 4];
  izwi::fuzz::write_file(dir + "/config.json", config.data(), config.size());
  izwi::fuzz::write_file(dir + "/model.safetensors", data + 1, size - 1);
  try {
    // A layer this small is always scanned for NaN and Inf as it loads (WeightSource::take_matrix).
    izwi::WeightLoader loader(dir, at::kFloat, at::kFloat, at::kCPU);
    const at::Tensor w = loader.take_matrix("l.weight", {16, 64});
    if (w.sizes() != at::IntArrayRef({16, 64}) || w.scalar_type() != at::kFloat) std::abort();
  } catch (const izwi::Error&) {
  }
  return 0;
}
