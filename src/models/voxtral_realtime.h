#pragma once
// Voxtral Realtime: streaming speech recognition. A Mistral decoder whose input at every
// position is the token embedding plus one audio embedding (80 ms of speech), and whose FFN
// inputs are scaled by (1 + ada(t_cond)), t_cond a sinusoidal embedding of the delay.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/embedding.h"
#include "layers/gated_mlp.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/self_attention.h"
#include "models/causal_lm.h"
#include "models/voxtral_audio_encoder.h"

namespace izwi {

class VoxtralRealtimeForConditionalGeneration final : public CausalLM, public Transcriber {
 public:
  VoxtralRealtimeForConditionalGeneration(const HfConfig& config, WeightSource& source);

  std::vector<LayerCacheSpec> cache_layout() const override;
  at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const override;
  at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const override;
  ModelCapabilities capabilities() const override;
  std::unique_ptr<RequestState> make_transcription_state(const TranscriptionSettings& settings) const override;
  std::vector<int32_t> transcription_prompt(const TranscriptionSettings& settings) const override;

  const VoxtralAudioEncoder& encoder() const { return *encoder_; }

 private:
  struct Layer {
    RMSNorm input_norm;
    SelfAttention attention;
    RMSNorm post_attention_norm;
    Linear ada_in, ada_out;  ///< ada_rms_norm.linear1 / linear2
    GatedMlp mlp;
  };
  /// 1 + ada(t_cond(delay)) for every layer: [layers, hidden]. Fixed by the weights, so kept per
  /// delay (up to kCachedDelays of them): a step reads them, it does not recompute them (2 products
  /// and an activation a layer, a few hundred launches a step on a GPU).
  at::Tensor ffn_scales(int64_t delay, const ForwardContext& ctx) const;
  static constexpr size_t kCachedDelays = 16;
  /// Encodes the audio every stream of this step newly needs, all streams in one encoder pass.
  void encode_new_audio(const ForwardContext& ctx) const;

  int64_t hidden_size_ = 0;
  Embedding embed_tokens_;
  std::vector<Layer> layers_;
  RMSNorm norm_;
  Linear lm_head_;
  std::unique_ptr<RotaryEmbedding> rope_;
  std::unique_ptr<VoxtralAudioEncoder> encoder_;
  at::Tensor time_inv_freq_;  ///< [hidden / 2]
  at::TensorOptions activations_;
  mutable std::mutex ffn_scales_mutex_;
  mutable std::map<int64_t, at::Tensor> ffn_scales_;  ///< by delay, on the device
};

}  // namespace izwi
