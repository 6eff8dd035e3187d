#pragma once
// Qwen3-TTS 12 Hz (CustomVoice, VoiceDesign, Base): text to speech. The talker, a Qwen3 decoder whose
// M-RoPE has three equal rows for speech (plain RoPE), reads dual-track inputs (text embedding
// through text_projection, plus codec embeddings) and samples codebook 0 of each 80 ms frame
// with codec_head; the code predictor completes the frame; the next input is the sum of the
// frame's 16 code embeddings plus the next text embedding. The speech tokenizer's decoder in
// `speech_tokenizer/` turns frames into 24 kHz audio. Base models clone voices: their speaker
// encoder turns reference audio into an x-vector that takes the speaker slot of the prompt.

#include <memory>
#include <string>
#include <vector>

#include "codec/codec_decoder.h"
#include "codec/codec_encoder.h"
#include "codec/warm_codec_states.h"
#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/decoder_layer.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "models/causal_lm.h"
#include "models/embedding_keys.h"
#include "models/qwen3_tts/code_predictor.h"
#include "models/qwen3_tts/qwen3_tts_config.h"
#include "models/qwen3_tts/qwen3_tts_request_state.h"
#include "models/qwen3_tts/speaker_encoder.h"

namespace izwi {

class Qwen3TtsForConditionalGeneration final : public CausalLM,
                                               public SpeechSynthesizer,
                                               public VoiceCloner,
                                               public AudioDecoder {
 public:
  /// Loads the talker from `source` and the codec decoder from `<model_dir>/speech_tokenizer`.
  Qwen3TtsForConditionalGeneration(const HfConfig& config, WeightSource& source);

  std::vector<LayerCacheSpec> cache_layout() const override;
  /// Inputs of the batch's new positions [T, hidden]: prompt positions from their two tracks,
  /// generated positions from their frame plus the text fed at that frame (read from the states).
  at::Tensor input_embeddings(const ForwardContext& ctx) const override;
  /// The talker's layers and final norm (graph-safe: a decode step's CUDA graph captures them).
  at::Tensor forward_embeddings(at::Tensor h, const ForwardContext& ctx, CacheBuffers& cache) const override;
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const override;
  std::vector<StepOutput> sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                 const ForwardContext& ctx, CacheBuffers& cache, Sampler& sampler) const override;
  /// Speech and its decoder always; voice cloning for Base models (which have a speaker encoder).
  ModelCapabilities capabilities() const override;
  SpeechPrompt speech_prompt(const SpeechRequest& request, const Tokenizer* tokenizer) const override;
  Voice create_voice(const std::vector<float>& samples, int32_t sample_rate, const VoiceTranscript& transcript,
                     const Tokenizer* tokenizer) const override;
  std::vector<std::vector<float>> decode_audio(const std::vector<RequestState*>& states,
                                               const std::vector<int32_t>& num_frames) const override;

  const Qwen3TtsConfig& config() const { return config_; }
  const CodecDecoder& codec() const { return *codec_; }

 private:
  /// text_projection(text_embedding(ids)): ids [N] (int64, on the model's device) -> [N, hidden].
  at::Tensor text_track(const at::Tensor& ids, const ForwardContext& ctx) const;

  Qwen3TtsConfig config_;
  Embedding codec_embedding_;
  Embedding text_embedding_;
  Linear text_fc1_, text_fc2_;
  std::vector<DecoderLayer> layers_;
  RMSNorm norm_;
  Linear codec_head_;
  std::unique_ptr<RotaryEmbedding> rope_;
  std::unique_ptr<Qwen3TtsCodePredictor> code_predictor_;
  std::unique_ptr<CodecDecoder> codec_;
  /// Base models whose speech tokenizer has its encoder: reference audio -> codes.
  std::unique_ptr<CodecEncoder> codec_encoder_;
  /// Codec states after in-context voices' reference frames (a few MB each on the 0.6B codec).
  static constexpr size_t kWarmCodecVoices = 16;
  std::unique_ptr<WarmCodecStates> warm_codecs_;
  std::unique_ptr<SpeakerEncoder> speaker_encoder_;  ///< Base models only.
  std::unique_ptr<EmbeddingKeys> voice_keys_;        ///< Prefix keys of the voices requests name.

  /// InvalidArgument or Unsupported for a voice this model cannot speak in (the reference of an
  /// in-context voice is checked with the prompt).
  void check_voice(const Voice& voice) const;
};

}  // namespace izwi
