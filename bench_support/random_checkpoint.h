#pragma once
// Writes a loadable random-weight checkpoint (config.json + model.safetensors) for a config.

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace izwi {

struct RandomCheckpointInfo {
  int64_t parameters = 0;
  int64_t file_bytes = 0;        ///< Of model.safetensors.
  int64_t codec_parameters = 0;  ///< Of speech_tokenizer/model.safetensors, when the preset has one.
};

/// Creates `out_dir` if needed and writes config.json and model.safetensors (tensors in
/// `dtype`, float32 or bfloat16) holding exactly the tensors the model for `config` loads. A
/// config with a `speech_tokenizer` entry (kSpeechTokenizerKey) also gets speech_tokenizer/ with
/// that config.json and the codec decoder's tensors (float32), and the entry is left out of the
/// model's config.json.
RandomCheckpointInfo write_random_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                             at::ScalarType dtype, uint64_t seed);

}  // namespace izwi
