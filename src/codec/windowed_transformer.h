#pragma once
// The audio codecs' causal sliding-window transformer. Layers: pre-norm, attention with NeoX RoPE
// and no q/k norm, pre-norm MLP, LayerScale on both residual branches. Two styles: Qwen3-TTS's
// codec (RMSNorm, SwiGLU MLP, wrapped in input_proj / final RMSNorm / output_proj) and Mimi's
// (LayerNorm with bias, GELU fc1/fc2 MLP, nothing around the layers; moshi's packed
// `in_proj_weight` is split at load). Query i sees key j iff 0 <= i - j < sliding_window. Streaming keeps, per layer,
// the rotated K and V of the last (sliding_window - 1) frames (zero-filled and masked out before the stream's start),
// and each stream's absolute position so RoPE matches a whole-sequence decode.

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace izwi {

class Backend;
class WeightSource;

struct WindowedTransformerConfig {
  enum class Style { kQwen3Tts, kMimi };
  Style style = Style::kQwen3Tts;
  int64_t input_dim = 0;  ///< latent_dim (Qwen3-TTS); hidden_size (Mimi)
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t sliding_window = 0;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  bool attention_bias = false;
};

class WindowedTransformer {
 public:
  WindowedTransformer() = default;
  WindowedTransformer(WeightSource& weights, const std::string& prefix, const WindowedTransformerConfig& config);

  /// Zero K/V caches for `batch` streams, two per layer (K then V): [batch, kv_heads, window-1, head_dim].
  void append_initial_state(std::vector<at::Tensor>& states, int64_t batch, const at::TensorOptions& options) const;
  /// x [B, T, input_dim] -> [B, T, input_dim]. `positions[b]` is stream b's first frame index;
  /// `states` points at this module's 2*num_layers caches, which are replaced.
  at::Tensor forward(const at::Tensor& x, const std::vector<int64_t>& positions, at::Tensor* states) const;
  int64_t weight_bytes() const;

 private:
  struct Layer {
    at::Tensor input_norm, input_norm_bias, post_norm, post_norm_bias, q, k, v, o, q_bias, k_bias, v_bias, o_bias,
        attn_scale, gate_up, up, down, mlp_scale;  ///< gate_up [2 * ffn, hidden] (SwiGLU) or up (GELU)
  };
  /// Takes q/k/v, from moshi's packed projection when the checkpoint has one.
  void take_qkv(WeightSource& weights, const std::string& prefix, Layer& layer) const;
  at::Tensor norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) const;
  at::Tensor mlp(const Layer& layer, const at::Tensor& x) const;

  WindowedTransformerConfig config_;
  const Backend* backend_ = nullptr;  ///< the weights' (WeightSource::backend)
  std::vector<Layer> layers_;
  at::Tensor input_proj_, input_proj_bias_, output_proj_, output_proj_bias_, norm_, inv_freq_;
};

}  // namespace izwi
