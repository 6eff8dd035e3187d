#pragma once
// What a model can do beyond generating text: one small interface per modality. A model
// implements the ones it has and names them once, in CausalLM::capabilities(); everything else
// (ModelInfo's flags, the engine's refusals) is derived from that answer. There are no throwing
// defaults: a model that cannot do a thing does not have its interface.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "izwi/audio_chat.h"
#include "izwi/request.h"
#include "izwi/speech.h"
#include "izwi/tokenizer.h"
#include "izwi/voice.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"

namespace izwi {

/// A speech or audio chat request resolved by the model: the keys of its prompt positions (what
/// the scheduler counts and the prefix tree matches; the inputs themselves are embeddings the
/// model builds), its state, and its length limits. The engine resolves the sampling of both heads.
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

// The interfaces are never owned through these pointers (the model is, as a CausalLM): their
// destructors are protected and not virtual.

/// Streaming speech recognition: text tokens from audio pushed while the request runs.
class Transcriber {
 public:
  /// A fresh per-request state, which takes the request's audio (RequestState::push_audio).
  virtual std::unique_ptr<RequestState> make_transcription_state(const TranscriptionSettings& settings) const = 0;
  /// The prompt that starts a transcription.
  virtual std::vector<int32_t> transcription_prompt(const TranscriptionSettings& settings) const = 0;

 protected:
  ~Transcriber() = default;
};

/// Text to speech: step outputs are frames of codes, which the model's AudioDecoder turns into PCM.
class SpeechSynthesizer {
 public:
  /// Validates `request` and builds its prompt (tokenizing text with `tokenizer`, which may be
  /// null). Safe from any thread.
  virtual SpeechPrompt speech_prompt(const SpeechRequest& request, const Tokenizer* tokenizer) const = 0;

 protected:
  ~SpeechSynthesizer() = default;
};

/// Voice cloning: a reusable Voice from reference audio, which speech requests then name.
class VoiceCloner {
 public:
  /// The voice of mono reference `samples` at `sample_rate` (resampled as the model needs);
  /// in-context when `transcript` is given (its text tokenized with `tokenizer`, which may be
  /// null). InvalidArgument for audio too short or silent. Safe from any thread.
  virtual Voice create_voice(const std::vector<float>& samples, int32_t sample_rate, const VoiceTranscript& transcript,
                             const Tokenizer* tokenizer) const = 0;

 protected:
  ~VoiceCloner() = default;
};

/// Audio chat: a conversation with audio in; steps emit text tokens and frames.
class AudioChatter {
 public:
  /// Validates `request`, encodes its audio (on the calling thread) and builds its prompt and state.
  virtual SpeechPrompt audio_chat_prompt(const AudioChatRequest& request, const Tokenizer* tokenizer) const = 0;

 protected:
  ~AudioChatter() = default;
};

/// Frames of codes to PCM, for the requests whose state produces audio (RequestState::produces_audio).
class AudioDecoder {
 public:
  /// Decodes the next `num_frames[i]` undecoded frames of each `states[i]` to PCM at the spec's
  /// output_sample_rate, batched across the requests; streamed audio equals a whole decode.
  virtual std::vector<std::vector<float>> decode_audio(const std::vector<RequestState*>& states,
                                                       const std::vector<int32_t>& num_frames) const = 0;

 protected:
  ~AudioDecoder() = default;
};

/// The modality interfaces a model has: each set to the model itself where it implements it,
/// null where it does not. A text model has none.
struct ModelCapabilities {
  const Transcriber* transcriber = nullptr;
  const SpeechSynthesizer* speech = nullptr;
  const VoiceCloner* voice_cloner = nullptr;
  const AudioChatter* audio_chat = nullptr;
  /// Set with `speech`, and with `audio_chat` where the model can voice its answers.
  const AudioDecoder* audio_decoder = nullptr;
};

}  // namespace izwi
