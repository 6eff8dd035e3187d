#pragma once
// Finds the codec a path holds, for load_codec_decoder and load_codec_encoder: the Qwen3-TTS
// speech tokenizer (a folder with a nested decoder_config, or inside a model folder's
// speech_tokenizer/), a decoder-only Qwen3-TTS codec folder, a transformers Mimi folder, a moshi
// Mimi .safetensors file, or a model folder holding one `tokenizer-*.safetensors` (LFM2-Audio).

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "codec/mimi_config.h"
#include "io/weight_loader.h"

namespace izwi {

class Backend;

struct CodecCheckpoint {
  enum class Kind { kQwen3TtsTokenizer, kQwen3TtsDecoder, kMimi };
  Kind kind = Kind::kMimi;
  std::string weights_path;  ///< A folder or a .safetensors file.
  std::string config_path;   ///< Empty for a moshi file (Kyutai's defaults apply).
  nlohmann::json config;     ///< The parsed config.json (null when there is none).
};

/// The one `tokenizer-*.safetensors` (a moshi Mimi checkpoint) in `dir`, or "" when there is none;
/// InvalidFormat when there are several.
std::string moshi_tokenizer_file(const std::string& dir);

/// NotFound naming the path when nothing is there; Unsupported when the folder holds no codec.
CodecCheckpoint find_codec_checkpoint(const std::string& path);

/// Opens the checkpoint's tensors for `backend` (every tensor in its compute dtype, on its device;
/// the codec's parts run their ops there); moshi names (Mimi files, the Qwen3-TTS quantizer) are
/// filed under transformers' names.
std::unique_ptr<WeightLoader> open_codec_weights(const CodecCheckpoint& checkpoint, const Backend& backend,
                                                 bool check_finite);

/// A Mimi checkpoint's architecture: its config.json, or Kyutai's when it has none.
MimiConfig mimi_config_of(const CodecCheckpoint& checkpoint);

}  // namespace izwi
