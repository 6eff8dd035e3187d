#pragma once
// The interface every model implements. A model is immutable after loading: per-request state
// lives in the CacheBuffers the executor owns (KV, conv state) and in each request's RequestState.

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"
#include "izwi/audio_chat.h"
#include "izwi/request.h"
#include "izwi/speech.h"
#include "izwi/tokenizer.h"
#include "layers/step/cache_buffers.h"
#include "layers/step/forward_context.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"
#include "layers/step/step_output.h"
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
  /// device tensors and does no host work that depends on them, so a CUDA graph can capture it.
  bool graph_safe_decode = false;
  bool accepts_audio = false;     ///< Transcribes speech (make_transcription_state works).
  int32_t audio_sample_rate = 0;  ///< Rate of the samples its streaming input takes.
  int32_t default_delay_tokens = 0;
  int64_t decode_weight_bytes = 0;  ///< Weight bytes a decode step reads (every matrix but untied embeddings).
  // Speech synthesis (speech_prompt works): step outputs are frames of codes, decoded to PCM.
  bool produces_audio = false;
  int32_t output_sample_rate = 0;
  int32_t num_codebooks = 0;
  std::vector<int32_t> suppressed_token_ids;  ///< Ids its main head must never sample (control ids).
  std::vector<std::string> speakers;
  std::vector<std::string> languages;
  bool clones_voices = false;  ///< create_voice works and speech requests take a Voice.
  bool audio_chat = false;     ///< audio_chat_prompt works: steps emit text tokens and frames.
  /// Sampling defaults of the main head and of the per-frame head (the frames' other codebooks),
  /// from the model folder's generation_config.json (sampling/generation_defaults.h).
  SamplingParams default_sampling;
  SamplingParams default_codebook_sampling;
};

/// One row of a step's output head: the sequence's sampling state and model state.
struct SampleRow {
  SamplingState* sampling = nullptr;
  RequestState* state = nullptr;
};

/// A speech request resolved by the model: the keys of its prompt positions (what the scheduler
/// counts and the prefix tree matches; the inputs themselves are embeddings the model builds),
/// its state, and its length limits. The engine resolves the sampling of both heads.
struct SpeechPrompt {
  std::vector<int32_t> keys;
  /// Leading positions whose key names their whole input, generated ones included (the prefix
  /// tree keys only those); unset: the prompt's.
  std::optional<int32_t> cacheable_positions;
  std::unique_ptr<RequestState> state;
  GenerationParams params;  ///< max_tokens and min_tokens (in items); the engine fills the rest.
  /// The per-frame head's sampling state inside `state`, which the engine fills.
  SamplingState* codebook_sampling = nullptr;
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
  /// The output head: one StepOutput per row of `hidden` (the final-norm hidden state of each
  /// sampling sequence's last position, in batch order). The default samples a token from the
  /// logits; a speech model also fills in the rest of the frame, all rows at once, and may use
  /// `cache`'s scratch for it.
  virtual std::vector<StepOutput> sample(const at::Tensor& hidden, const std::vector<SampleRow>& rows,
                                         const ForwardContext& ctx, CacheBuffers& cache, Sampler& sampler) const;

  /// Speech input (spec().accepts_audio): a fresh per-request state and the prompt that starts
  /// a transcription. Other models throw Unsupported.
  virtual std::unique_ptr<RequestState> make_transcription_state(const TranscriptionSettings& settings) const;
  virtual std::vector<int32_t> transcription_prompt(const TranscriptionSettings& settings) const;

  /// Speech output (spec().produces_audio): validates `request`, builds its prompt (tokenizing
  /// text with `tokenizer`, which may be null) and resolves its sampling. Safe from any thread.
  virtual SpeechPrompt speech_prompt(const SpeechRequest& request, const Tokenizer* tokenizer) const;
  /// Audio chat (spec().audio_chat): validates `request`, encodes its audio (on the calling
  /// thread), builds its prompt and state and resolves its sampling. Other models throw Unsupported.
  virtual SpeechPrompt audio_chat_prompt(const AudioChatRequest& request, const Tokenizer* tokenizer) const;
  /// Voice cloning (spec().clones_voices): the voice of mono reference `samples` at `sample_rate`
  /// (resampled as the model needs); in-context when `transcript` is given (its text tokenized
  /// with `tokenizer`, which may be null). InvalidArgument for audio too short or silent. Safe
  /// from any thread. Other models throw Unsupported.
  virtual Voice create_voice(const std::vector<float>& samples, int32_t sample_rate, const VoiceTranscript& transcript,
                             const Tokenizer* tokenizer) const;
  /// Decodes the next `num_frames[i]` undecoded frames of each `states[i]` to PCM at
  /// output_sample_rate, batched across the requests; streamed audio equals a whole decode.
  virtual std::vector<std::vector<float>> decode_audio(const std::vector<RequestState*>& states,
                                                       const std::vector<int32_t>& num_frames) const;
};

}  // namespace izwi
