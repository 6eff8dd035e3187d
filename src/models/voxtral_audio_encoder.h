#pragma once
// Voxtral Realtime's audio side: causal conv stem (k3 s1, then k3 s2, GELU) over log-mel
// frames, a causal transformer encoder with sliding-window attention, and the projector that
// turns every `downsample` encoder frames into one decoder embedding (one per 80 ms).
//
// It runs incrementally: each call takes a multiple of mel_frames_per_embedding() new mel
// frames and carries the conv tails and the encoder's recent K/V in EncoderState, so streamed
// and whole-file encoding give the same embeddings.

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "io/hf_config.h"
#include "io/weight_source.h"
#include "layers/gated_mlp.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "layers/rotary_embedding.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct VoxtralEncoderConfig {
  int64_t mel_bins = 128, hidden_size = 0, intermediate_size = 0, num_layers = 0, num_heads = 0, num_kv_heads = 0;
  int64_t head_dim = 0, sliding_window = 0, downsample = 4, text_hidden_size = 0;
  double rms_norm_eps = 1e-5;
  RopeConfig rope;

  /// From config.json's audio_config plus the top-level downsample_factor and text width.
  static VoxtralEncoderConfig parse(const JsonFields& audio, int64_t downsample, int64_t text_hidden_size);
};

class VoxtralAudioEncoder {
 public:
  /// What one stream carries between calls.
  struct State {
    at::Tensor conv1_tail;         ///< [mel_bins, 2]: the last mel frames conv1 saw
    at::Tensor conv2_tail;         ///< [hidden, 1]: the last conv1 output conv2 saw
    std::vector<at::Tensor> keys;  ///< per layer [frames, kv_heads, head_dim], at most window - 1
    std::vector<at::Tensor> values;
    int64_t frames = 0;  ///< Encoder frames produced so far (their positions).
  };

  VoxtralAudioEncoder(WeightSource& source, const VoxtralEncoderConfig& config);

  State make_state() const;
  /// Mel frames consumed per decoder embedding (2 for conv2's stride x downsample).
  int64_t mel_frames_per_embedding() const { return 2 * config_.downsample; }
  int64_t mel_bins() const { return config_.mel_bins; }
  /// mel [mel_bins, n * mel_frames_per_embedding()] -> embeddings [n, text_hidden_size].
  at::Tensor encode(State& state, const at::Tensor& mel, const ForwardContext& ctx) const;

  /// One stream's share of a batched encoder call.
  struct Job {
    State* state;
    at::Tensor mel;  ///< [mel_bins, n * mel_frames_per_embedding()]
  };
  /// encode() for many streams in one pass: the linear layers run once over all streams' frames
  /// (their weights are read once per step, not once per stream); the convolutions and attention
  /// use each stream's own state. Returns one embeddings tensor per job.
  /// A long job (a whole file pushed at once) is encoded in passes of at most mel_frames_per_pass()
  /// frames through the same streaming state, so memory stays linear in the audio's length (one
  /// pass attends over at most its own frames plus the window) and the embeddings are those of
  /// streaming the audio in such chunks.
  std::vector<at::Tensor> encode_batch(const std::vector<Job>& jobs, const ForwardContext& ctx) const;
  /// Most mel frames of one stream in one encoder pass: a few sliding windows, a multiple of
  /// mel_frames_per_embedding().
  int64_t mel_frames_per_pass() const;

 private:
  struct Layer {
    RMSNorm attention_norm;
    Linear qkv, out;
    RMSNorm mlp_norm;
    GatedMlp mlp;
  };
  /// Causal conv stem over a stream's new mel frames: [frames, hidden].
  at::Tensor conv_stem(const Backend& backend, State& state, const at::Tensor& mel) const;
  /// Sliding-window attention of one stream's rows of `qkv` against its kept K/V (updated), before
  /// the output projection: [n, heads * head_dim].
  at::Tensor attend(const Backend& backend, const at::Tensor& qkv, at::Tensor& keys, at::Tensor& values,
                    int64_t first_pos) const;
  /// One pass of encode_batch over jobs of at most mel_frames_per_pass() frames each.
  std::vector<at::Tensor> encode_pass(const std::vector<Job>& jobs, const ForwardContext& ctx) const;

  VoxtralEncoderConfig config_;
  at::Tensor conv1_weight_, conv1_bias_, conv2_weight_, conv2_bias_;
  std::vector<Layer> layers_;
  RMSNorm norm_;
  Linear projector_in_, projector_out_;
  std::unique_ptr<RotaryEmbedding> rope_;
};

}  // namespace izwi
