#pragma once
// The interface every model implements. A model is immutable after loading: per-request state
// lives in the CacheBuffers the executor owns (KV, conv state) and in each request's RequestState.

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "io/generation_defaults.h"
#include "izwi/request.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"
#include "layers/step/step_output.h"
#include "models/modalities.h"
#include "sampling/sampler.h"

namespace izwi {

struct ModelSpec {
  std::string model_type;
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t max_positions = 0;
  std::vector<int32_t> eos_token_ids;
  std::optional<int32_t> bos_token_id;
  bool needs_state_slots = false;  ///< Has recurrent per-sequence state (e.g. LFM2 conv layers).
  /// Its forward pass over a decode-only batch reads the step only through ForwardContext's
  /// device tensors and does no host work that depends on them, and its output head is the default
  /// one (logits(), then sample_tokens), so a CUDA graph can capture the pass and the logits.
  bool graph_safe_decode = false;
  /// Its decode pass splits in two (CausalLM::input_embeddings, then forward_embeddings): the
  /// input embeddings are built eagerly from per-step host state (request states, index lists),
  /// and forward_embeddings over a decode-only batch is graph-safe as above. A CUDA graph then
  /// captures forward_embeddings from a fixed [bucket, hidden] input buffer to the final hidden
  /// states; the output head (sample()) stays the model's own and eager. Not with graph_safe_decode.
  bool graph_safe_decode_from_embeddings = false;
  int64_t decode_weight_bytes = 0;  ///< Weight bytes a decode step reads (every matrix but untied embeddings).
  /// Bytes of every weight the model holds, its codec and encoders included, in the form held
  /// (ResidentWeightBytes, counted by load_causal_lm; 0 for a model built otherwise).
  int64_t weight_bytes = 0;
  // What a model can do beyond text is not said here: CausalLM::capabilities() names it once.
  // These are the data of those capabilities.
  int32_t audio_sample_rate = 0;     ///< Transcriber: the rate of the samples its streaming input takes.
  int32_t default_delay_tokens = 0;  ///< Transcriber: the streaming delay when a request names none.
  /// Speech and audio chat: the rate of decoded audio (0 without an AudioDecoder) and the codes per frame.
  int32_t output_sample_rate = 0;
  int32_t num_codebooks = 0;
  std::vector<int32_t> suppressed_token_ids;  ///< Ids its main head must never sample (control ids).
  std::vector<std::string> speakers;          ///< SpeechSynthesizer: the named speakers and languages.
  std::vector<std::string> languages;
  /// Sampling defaults of the main head and of the per-frame head (the frames' other codebooks),
  /// from the model folder's generation_config.json (io/generation_defaults.h, read by base_spec).
  SamplingParams default_sampling;
  SamplingParams default_codebook_sampling;
};

/// One row of a step's output head: the sequence's sampling state and model state.
struct SampleRow {
  SamplingState* sampling = nullptr;
  RequestState* state = nullptr;
};

class HfConfig;

/// The default output head's draw: one token per row of `logits` [rows, vocab] (any device and
/// float dtype), row r sampled with rows[r]'s state (constraints and logprobs as
/// Sampler::sample_rows applies them). CausalLM::sample's default, and the head of a step whose
/// logits a CUDA graph computed.
std::vector<StepOutput> sample_tokens(const at::Tensor& logits, const std::vector<SampleRow>& rows,
                                      const Backend& backend, Sampler& sampler);

/// The spec fields every model reads the same way: its type, its sizes, EOS/BOS ids from `config`
/// (config.json or the section of it that holds them), and each head's default sampling from the
/// folder's generation_config.json as `rule` reads it.
ModelSpec base_spec(const HfConfig& hf, const JsonFields& config, int64_t vocab_size, int64_t hidden_size,
                    int64_t max_positions, GenerationDefaultsRule rule);

/// What every model does: a forward pass over a step's batch and an output head. What some models
/// do besides (transcribe, synthesize speech, clone voices, audio chat) is in the interfaces of
/// models/modalities.h, which capabilities() names.
class CausalLM {
 public:
  virtual ~CausalLM() = default;
  const ModelSpec& spec() const { return spec_; }
  /// Sets spec().weight_bytes: what the load counted (load_causal_lm), known only once the model is built.
  void set_weight_bytes(int64_t bytes) { spec_.weight_bytes = bytes; }
  /// What each layer keeps in the cache.
  virtual std::vector<LayerCacheSpec> cache_layout() const = 0;
  /// Runs the batch; returns the final-norm hidden states [T, hidden]. The default is
  /// forward_embeddings(input_embeddings(ctx)), the one path of the models that split their pass
  /// (graph_safe_decode_from_embeddings); the others override it.
  virtual at::Tensor forward(const ForwardContext& ctx, CacheBuffers& cache) const;
  /// The batch's input embeddings [T, hidden] in ctx.dtype: the per-step work that reads the
  /// host (request states, index lists), run eagerly. Models that do not split their pass fail.
  virtual at::Tensor input_embeddings(const ForwardContext& ctx) const;
  /// The rest of forward(): input embeddings `h` [T, hidden] (consumed: may be updated in place)
  /// -> final-norm hidden states [T, hidden]. Reads the step only through ctx's device tensors.
  virtual at::Tensor forward_embeddings(at::Tensor h, const ForwardContext& ctx, CacheBuffers& cache) const;
  /// hidden [N, hidden] -> logits [N, vocab]
  virtual at::Tensor logits(const at::Tensor& hidden, const ForwardContext& ctx) const = 0;
  /// The output head: one StepOutput per row of `hidden` (the final-norm hidden state of each
  /// sampling sequence's last position, in batch order). The default samples a token from the
  /// logits; a speech model also fills in the rest of the frame, all rows at once, and may use
  /// `cache`'s scratch for it.
  virtual std::vector<StepOutput> sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                         const ForwardContext& ctx, CacheBuffers& cache, Sampler& sampler) const;
  /// The modality interfaces this model implements, each pointing to the model itself; the
  /// default is a text model's: none.
  virtual ModelCapabilities capabilities() const { return {}; }

 protected:
  ModelSpec spec_;  ///< Filled by the model's constructor; immutable after.
};

}  // namespace izwi
