#pragma once
// The interface every audio codec decoder implements (codes -> waveform), whole-sequence and
// exact incremental streaming of many streams at once, plus the loader that picks the codec a
// folder or file holds.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace izwi {

/// Per-stream incremental state (what the decoder must remember between chunks).
class Backend;

class CodecDecoderState {
 public:
  virtual ~CodecDecoderState() = default;
  /// An independent copy: decoding into either leaves the other as it was.
  virtual std::unique_ptr<CodecDecoderState> clone() const = 0;
};

class CodecDecoder {
 public:
  /// Frames the decoders run through their forward pass at a time, and callers with long inputs
  /// feed decode_streaming at a time: activations grow with the frames of one pass, and
  /// streaming is exact in any chunking.
  static constexpr int64_t kDecodeChunkFrames = 128;

  virtual ~CodecDecoder() = default;
  virtual int32_t num_codebooks() const = 0;
  virtual int32_t codebook_size() const = 0;
  virtual int32_t sample_rate() const = 0;
  virtual int32_t samples_per_frame() const = 0;
  /// codes [num_codebooks, frames] integer (CPU) -> [frames * samples_per_frame] float32 CPU.
  /// InvalidArgument naming the codebook and frame for a code outside [0, codebook_size), or a
  /// wrong number of codebooks.
  virtual at::Tensor decode(const at::Tensor& codes) const = 0;
  /// The checks decode() makes, with its errors, without decoding (a caller streaming a long
  /// input checks it whole before writing any audio).
  virtual void check_codes(const at::Tensor& codes) const = 0;
  virtual std::unique_ptr<CodecDecoderState> new_state() const = 0;
  /// Incremental decode of several streams at once: appends each stream's new frames
  /// (codes [num_codebooks, n_i], n_i >= 1) and returns exactly the samples they add
  /// ([n_i * samples_per_frame] float32 CPU each). Concatenating a stream's outputs equals
  /// decode() of all its codes (within float rounding). Streams with the same n_i run as one batch,
  /// kDecodeChunkFrames frames at a time.
  virtual std::vector<at::Tensor> decode_streaming(const std::vector<CodecDecoderState*>& states,
                                                   const std::vector<at::Tensor>& new_codes) const = 0;
  /// Bytes of weights (for benchmarks).
  virtual int64_t weight_bytes() const = 0;
};

/// Loads the codec decoder in `path`: a Qwen3-TTS speech_tokenizer folder (config with a nested
/// `decoder_config`, `decoder.`-prefixed tensors), a decoder-only Qwen3-TTS codec folder (flat
/// config), a Qwen3-TTS model folder holding `speech_tokenizer/`, a transformers Mimi folder
/// (model_type "mimi"), a moshi Mimi .safetensors file, or a model folder holding one
/// `tokenizer-*.safetensors` (LFM2-Audio; Kyutai's Mimi architecture). NotFound naming the
/// missing folder or file; InvalidFormat naming the tensor whose shape disagrees with the config.
/// `check_finite` scans every tensor for NaN and Inf (WeightSource::set_check_finite).
/// `num_codebooks` (0: all the checkpoint has) picks how many codebooks a Mimi decodes; the
/// Qwen3-TTS codec decodes exactly its own number. The codec's weights load in `backend`'s compute
/// dtype on its device and its ops run on it (a model passes its own; tools and tests
/// Backend::host()); `backend` must outlive the decoder.
std::unique_ptr<CodecDecoder> load_codec_decoder(const std::string& path, const Backend& backend,
                                                 bool check_finite = false, int32_t num_codebooks = 0);

}  // namespace izwi
