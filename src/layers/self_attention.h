#pragma once
// Multi-head self-attention with grouped KV heads, optional per-head q/k RMSNorm (Qwen3, LFM2)
// and rotary positions, reading and writing the paged KV cache.

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "io/weight_source.h"
#include "kernels/ops/attention_inputs_op.h"
#include "layers/linear.h"
#include "layers/rotary_embedding.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"

namespace izwi {

struct SelfAttentionSpec {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  bool qkv_bias = false;
  bool output_bias = false;
  std::optional<double> qk_norm_eps;  ///< Set when the checkpoint has per-head q/k norms.
  int64_t sliding_window = 0;         ///< > 0: attend to the last sliding_window positions only.
  // Weight names under the layer prefix (they differ between architectures).
  std::string q_name = "q_proj", k_name = "k_proj", v_name = "v_proj", o_name = "o_proj";
  std::string q_norm_name = "q_norm", k_norm_name = "k_norm";
};

class SelfAttention {
 public:
  SelfAttention(WeightSource& source, const std::string& prefix, const SelfAttentionSpec& spec);

  /// x: [T, hidden] -> [T, hidden]
  at::Tensor operator()(const at::Tensor& x, const RotaryEmbedding& rope, LayerCache& cache,
                        const ForwardContext& ctx) const;

  LayerCacheSpec cache_spec() const;
  int64_t weight_bytes() const { return qkv_proj_.weight_bytes() + o_proj_.weight_bytes(); }

 private:
  SelfAttentionSpec spec_;
  Linear qkv_proj_, o_proj_;   ///< q, k and v stacked into one matrix
  ops::AttentionHeads heads_;  ///< with the per-head q/k norm weights where the checkpoint has them
};

}  // namespace izwi
