#pragma once
// config.json's `quantization_config`: how a checkpoint released pre-quantized stores its linear
// layers. Supported (docs/quantization.md, "Pre-quantized checkpoints"):
//   gptq  bits 4, group_size 32-128 or -1, desc_act (g_idx act-order), sym, checkpoint_format
//         gptq (v1: zero points stored minus one) or gptq_v2
//   awq   bits 4, group_size 32-128 or -1, version gemm (gemv, gemv_fast, marlin, exllama, ipex refused)
//   fp8   e4m3 weights with a per-tensor or per-channel scale (weight_block_size refused)
//   compressed-tensors  format float-quantized: 8-bit float weights, strategy tensor or channel
// Anything else is an error naming the field and its value: Unsupported for a valid variant izwi
// does not read, InvalidFormat for a value no variant has.

#include <cstdint>
#include <string>

#include "common/json_fields.h"

namespace izwi {

enum class QuantMethod {
  None,  ///< no quantization_config: a float checkpoint
  Gptq,
  Awq,
  Fp8,  ///< quant_method fp8, or compressed-tensors float-quantized
};

struct QuantizationConfig {
  QuantMethod method = QuantMethod::None;
  std::string origin;  ///< "<dir>/config.json.quantization_config", for messages
  int64_t bits = 0;
  /// Input columns sharing a scale (and zero point); -1 = one group per output channel.
  int64_t group_size = -1;
  bool desc_act = false;  ///< GPTQ act-order: g_idx permutes the input columns into groups
  bool sym = true;
  /// GPTQ v1 (checkpoint_format "gptq", the default): qzeros hold each zero point minus one.
  bool zeros_minus_one = false;
  /// FP8: static input scales are stored (input_scale tensors); the CPU reads weights only.
  bool static_activations = false;
};

/// Reads `quantization_config` from a parsed config.json; method None when absent.
QuantizationConfig read_quantization_config(const JsonFields& config);

/// The model folder's config.json, if it has one (a bare .safetensors path has none: None).
QuantizationConfig load_quantization_config(const std::string& model_dir);

const char* quant_method_name(QuantMethod method);

}  // namespace izwi
