#pragma once
// LFM2-Audio (liquid-audio's LFM2AudioModel): the LFM2 backbone under "lfm.", audio in through
// the NeMo log-mel, FastConformer and adapter (the embeddings take the place of token embeddings
// at audio-in positions), audio out through the depthformer (a frame of Mimi codes per audio
// position, fed back as the sum of its codebooks' audio embeddings). Each request's state says
// which modality samples next, as liquid-audio's generate_sequential / generate_interleaved do.
// Requests without that state (plain text) run as the LFM2 text model.

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "audio/nemo_log_mel.h"
#include "codec/codec_decoder.h"
#include "io/hf_config.h"
#include "io/weight_source.h"
#include "models/causal_lm.h"
#include "models/embedding_keys.h"
#include "models/lfm2_audio/audio_adapter.h"
#include "models/lfm2_audio/depthformer.h"
#include "models/lfm2_audio/fast_conformer.h"
#include "models/lfm2_audio/lfm2_audio_config.h"
#include "models/lfm2_audio/lfm2_audio_request_state.h"
#include "models/lfm2_backbone.h"

namespace izwi {

class Lfm2AudioForConditionalGeneration final : public CausalLM, public AudioChatter, public AudioDecoder {
 public:
  Lfm2AudioForConditionalGeneration(const HfConfig& hf, WeightSource& source);

  std::vector<LayerCacheSpec> cache_layout() const override { return backbone_.cache_layout(); }
  /// Input embeddings [T, hidden] of the batch: token, audio-in or frame embeddings per
  /// position, as each request's state says.
  at::Tensor input_embeddings(const ForwardContext& ctx) const override;
  /// The LFM2 backbone (graph-safe: a decode step's CUDA graph captures it).
  at::Tensor forward_embeddings(at::Tensor h, const ForwardContext& ctx, CacheBuffers& cache) const override;
  /// Text logits (the head is the tied token embedding).
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const override;
  /// Per row: a text token, or a frame from the depthformer (all audio rows at once), as the
  /// row's state says; updates the state's modality as liquid-audio does. A frame's `token` is
  /// its prefix key (the key the same frame has as a prompt input of a later turn).
  std::vector<StepOutput> sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                 const ForwardContext& ctx, CacheBuffers& cache, Sampler& sampler) const override;

  /// Audio chat always; its AudioDecoder where the folder has the Mimi codec to voice answers.
  ModelCapabilities capabilities() const override;

  const Lfm2AudioConfig& config() const { return config_; }
  /// One user turn's audio (mono `samples` at the preprocessor's 16 kHz) -> its audio-in
  /// embeddings [positions, hidden] float32 on the model's device: log-mel, FastConformer,
  /// adapter. Runs on the calling thread; the whole turn at once (the encoder attends over all of it).
  at::Tensor encode_audio(const std::vector<float>& samples) const;
  /// The positions encode_audio makes of `samples` samples, from the count alone.
  int64_t audio_positions(int64_t samples) const;
  /// A request's state for `prompt` in `mode`.
  std::unique_ptr<Lfm2AudioRequestState> make_state(Lfm2AudioPrompt prompt, Lfm2AudioGeneration mode) const;
  SpeechPrompt audio_chat_prompt(const AudioChatRequest& request, const Tokenizer* tokenizer) const override;
  /// Decodes the next frames of each request with the folder's Mimi (its 8 first codebooks);
  /// end-of-audio frames carry no audio.
  std::vector<std::vector<float>> decode_audio(const std::vector<RequestState*>& states,
                                               const std::vector<int32_t>& num_frames) const override;

 private:
  /// Sum over codebooks of audio_embedding[code_k + k * 2049] for each frame -> [frames, hidden];
  /// `ids` [frames * codebooks] on the device, those indices frame by frame.
  at::Tensor frame_embeddings(const at::Tensor& ids, const ForwardContext& ctx) const;

  Lfm2AudioConfig config_;
  Lfm2Backbone backbone_;
  FastConformerEncoder encoder_;
  Lfm2AudioAdapter adapter_;
  Linear text_head_;            ///< the tied token embedding
  at::Tensor audio_embedding_;  ///< [codebooks * 2049, hidden]
  Depthformer depthformer_;
  std::unique_ptr<CodecDecoder> codec_;  ///< The folder's tokenizer-*.safetensors; null without one.
  /// Prefix keys of audio-in rows and frames, so a conversation's later turns reuse its KV.
  std::unique_ptr<EmbeddingKeys> keys_;
};

}  // namespace izwi
