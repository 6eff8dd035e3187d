#pragma once
// The interface of an audio codec encoder (waveform -> codes), and the loader that picks the
// encoder a folder or file holds.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>

namespace izwi {

class Backend;

class CodecEncoder {
 public:
  virtual ~CodecEncoder() = default;
  /// Codebooks the checkpoint holds (encode() may ask for fewer).
  virtual int32_t max_codebooks() const = 0;
  /// Codebooks encode() returns when asked for 0: the checkpoint's, or fewer where its model
  /// keeps fewer (the Qwen3-TTS speech tokenizer keeps 16 of 32).
  virtual int32_t default_codebooks() const = 0;
  virtual int32_t codebook_size() const = 0;
  virtual int32_t sample_rate() const = 0;
  virtual int32_t samples_per_frame() const = 0;
  /// samples [n] float, mono at sample_rate() -> codes [K, ceil(n / samples_per_frame)] int64 CPU,
  /// K = num_codebooks or default_codebooks() when 0. InvalidArgument for no samples, a
  /// non-finite sample or a K outside [1, max_codebooks()] (or below the semantic codebooks).
  virtual at::Tensor encode(const at::Tensor& samples, int32_t num_codebooks = 0) const = 0;
};

/// Loads the encoder in `path`: a transformers Mimi folder (config.json with model_type "mimi"),
/// a Qwen3-TTS speech_tokenizer folder or model folder (its `encoder.*` Mimi, 16 codebooks kept),
/// a moshi Mimi .safetensors file, or a folder holding one `tokenizer-*.safetensors` (LFM2-Audio).
/// Loaded for `backend` as load_codec_decoder is; `backend` must outlive the encoder.
std::unique_ptr<CodecEncoder> load_codec_encoder(const std::string& path, const Backend& backend,
                                                 bool check_finite = false);

/// True when `path` (as load_codec_encoder takes it) holds an encoder: a Mimi, or a Qwen3-TTS
/// speech tokenizer with a non-empty encoder_config. Errors as find_codec_checkpoint.
bool holds_codec_encoder(const std::string& path);

}  // namespace izwi
