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

/// The same with the linear layers' weights in FP8 as compressed-tensors releases them (e4m3fn
/// `weight` with a float32 `weight_scale` per output channel, `quantization_config` in
/// config.json), the rest in bfloat16: what an FP8 checkpoint from the Hub holds. Text models only
/// (llama, qwen3, lfm2); the linear layers are the 2-D `*.weight` tensors other than embeddings
/// and lm_head.
RandomCheckpointInfo write_random_fp8_checkpoint(const nlohmann::json& config, const std::string& out_dir,
                                                 uint64_t seed);

}  // namespace izwi
