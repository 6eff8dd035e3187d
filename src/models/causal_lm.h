#pragma once
// The interface every text-generating model implements. A model is immutable after loading:
// all per-request state lives in the CacheBuffers the executor owns.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "executor/cache_buffers.h"
#include "models/forward_context.h"
#include "models/streaming_input.h"

namespace izwi {

struct ModelSpec {
  std::string model_type;
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t max_positions = 0;
  std::vector<int32_t> eos_token_ids;
  std::optional<int32_t> bos_token_id;
  bool needs_state_slots = false;  ///< Has recurrent per-sequence state (e.g. LFM2 conv layers).
  bool accepts_audio = false;      ///< Transcribes speech (make_streaming_input works).
  int32_t audio_sample_rate = 0;   ///< Rate of the samples its streaming input takes.
  int32_t default_delay_tokens = 0;
  int64_t decode_weight_bytes = 0;  ///< Weight bytes a decode step reads (every matrix but untied embeddings).
};

/// The spec fields every model reads the same way: type, sizes, and EOS/BOS ids from `config`.
ModelSpec base_spec(const std::string& model_type, const JsonFields& config, int64_t vocab_size, int64_t hidden_size,
                    int64_t max_positions);

class CausalLM {
 public:
  virtual ~CausalLM() = default;
  virtual const ModelSpec& spec() const = 0;
  /// What each layer keeps in the cache.
  virtual std::vector<LayerCacheSpec> cache_layout() const = 0;
  /// Runs the batch; returns the final-norm hidden states [T, hidden].
  virtual at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const = 0;
  /// hidden [N, hidden] -> logits [N, vocab]
  virtual at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const = 0;

  /// Speech input (spec().accepts_audio): a fresh per-request input and the prompt that starts
  /// a transcription. Other models throw Unsupported.
  virtual std::unique_ptr<StreamingInput> make_streaming_input(const TranscriptionSettings& settings) const;
  virtual std::vector<int32_t> transcription_prompt(const TranscriptionSettings& settings) const;
};

}  // namespace izwi
