#pragma once
// Mimi codec configuration (transformers' MimiConfig field names). Every field defaults to the
// released kyutai/mimi value, so a moshi checkpoint without a config.json (LFM2-Audio's
// tokenizer-*.safetensors) gets Kyutai's architecture.

#include <cstdint>
#include <vector>

#include "codec/split_rvq.h"
#include "codec/windowed_transformer.h"

namespace izwi {

class JsonFields;

struct MimiConfig {
  int32_t sample_rate = 24000;
  int64_t hidden_size = 512;
  int64_t num_filters = 64;
  int64_t num_residual_layers = 1;
  std::vector<int64_t> upsampling_ratios{8, 6, 5, 4};
  int64_t kernel_size = 7;
  int64_t last_kernel_size = 3;
  int64_t residual_kernel_size = 3;
  int64_t dilation_growth_rate = 2;
  int64_t compress = 2;
  int64_t upsample_groups = 512;
  /// Frames per SEANet frame: 2 when the frame rate is half the SEANet rate (12.5 of 25 Hz),
  /// 1 when there is no down/upsampling stage.
  int64_t resample_stride = 2;
  SplitRvqConfig quantizer{32, 1, 2048, 256, 512};
  WindowedTransformerConfig transformer;

  MimiConfig();
  /// Reads a transformers MimiConfig object. InvalidFormat naming `fields.origin()` and the field
  /// for a value out of range; Unsupported for a setting izwi does not implement (non-causal
  /// convs, other padding modes, conv shortcuts, stereo, activations other than GELU).
  static MimiConfig parse(const JsonFields& fields);

  /// Audio samples per SEANet frame (product of the ratios).
  int64_t hop_length() const;
  int64_t samples_per_frame() const { return hop_length() * resample_stride; }
};

}  // namespace izwi
