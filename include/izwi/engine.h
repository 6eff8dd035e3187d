#pragma once
/// @file engine.h
/// The izwi engine: load a model folder, submit requests from any thread, get tokens back.
///
/// @code
///   izwi::Engine engine("models/llama", izwi::EngineConfig{});
///   izwi::Request req;
///   req.prompt_ids = {1, 15, 30};
///   req.params.max_tokens = 32;
///   izwi::Output out = engine.generate(req);
/// @endcode

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "izwi/audio_chat.h"
#include "izwi/config.h"
#include "izwi/errors.h"
#include "izwi/export.h"
#include "izwi/kv_events.h"
#include "izwi/metrics.h"
#include "izwi/output.h"
#include "izwi/request.h"
#include "izwi/speech.h"
#include "izwi/stream_handle.h"
#include "izwi/tokenizer.h"
#include "izwi/transcription.h"

namespace izwi {

namespace detail {
class EngineImpl;
}  // namespace detail

/// Facts about the loaded model that callers need to build requests.
struct ModelInfo {
  std::string model_type;               ///< config.json model_type, e.g. "llama".
  int32_t vocab_size = 0;               ///< Token ids are in [0, vocab_size).
  int32_t max_positions = 0;            ///< Longest prompt + output the engine accepts.
  std::vector<int32_t> eos_token_ids;   ///< Ids that end generation.
  std::optional<int32_t> bos_token_id;  ///< The id a prompt starts with, when the model has one.
  int64_t decode_weight_bytes = 0;      ///< Weight bytes one decode step reads (memory-bandwidth bound).
  int64_t weight_bytes = 0;             ///< Bytes of every weight held, codec and encoders too (docs/quantization.md).
  bool has_tokenizer = false;           ///< The folder has tokenizer.json, tekken.json or vocab.json + merges.txt.
  bool accepts_audio = false;           ///< Supports start_transcription / transcribe.
  int32_t audio_sample_rate = 0;        ///< Rate audio is resampled to, when accepts_audio.
  bool produces_audio = false;          ///< Supports synthesize / synthesize_streaming.
  int32_t output_sample_rate = 0;       ///< Rate of synthesized audio (produces_audio, or audio_chat with a codec).
  int32_t num_codebooks = 0;            ///< Codes per audio frame (produces_audio or audio_chat).
  std::vector<std::string> speakers;    ///< SpeechRequest::speaker values the model knows.
  std::vector<std::string> languages;   ///< SpeechRequest::language values besides "auto".
  bool clones_voices = false;           ///< Supports create_voice and SpeechRequest::voice (Qwen3-TTS Base).
  bool audio_chat = false;              ///< Supports audio_chat / audio_chat_streaming (LFM2-Audio).
  /// What unset SamplingParams fields take (izwi/sampling.h): the main head's defaults (text,
  /// transcription, codebook 0 of speech, the text of audio chat) and the per-frame head's (the
  /// other codebooks of speech and the audio of audio chat), from generation_config.json.
  SamplingParams default_sampling;
  SamplingParams default_codebook_sampling;  ///< See default_sampling.
  int32_t kv_cache_blocks = 0;  ///< Blocks in the paged pool (EngineConfig::kv_cache_memory_fraction sizes it).
  int64_t kv_cache_bytes = 0;   ///< Device bytes of the paged pool's blocks (K, V, state snapshots).
};

/// What a model is, in words, from its ModelInfo: "a text-to-speech model" (produces_audio:
/// synthesize), "an audio chat model" (audio_chat), "a speech recognition model" (accepts_audio:
/// transcribe), else "a text model" (generate). Errors and tools use it to say which call or tool serves a folder.
IZWI_API std::string describe_model_kind(const ModelInfo& info);

/// Thread-safe engine façade. A worker thread runs the step loop (schedule, execute, process);
/// requests from many threads are batched together.
class IZWI_API Engine {
 public:
  /// Loads config.json + safetensors from `model_dir`. Throws izwi::Error naming the bad file,
  /// field or tensor.
  explicit Engine(const std::string& model_dir, const EngineConfig& config = EngineConfig{});
  /// Calls shutdown(). May run inside the engine's own stream callback (see generate_streaming):
  /// it then stops the engine without waiting for the worker, which frees it after the current step.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Blocks until the request finishes (with GenerationParams::n > 1: every choice, in
  /// Output::choices). Throws izwi::Error for invalid input (before anything runs) and for
  /// failures inside the engine; an aborted request returns FinishReason::Abort.
  /// Throws InvalidArgument inside a stream callback of this engine (it would deadlock).
  Output generate(const Request& request);

  /// Returns at once with a handle yielding chunks as tokens are produced.
  StreamHandle generate_streaming(const Request& request);

  /// Callback form: `on_chunk` runs on the engine's worker thread for every chunk, the last one
  /// with finished == true; keep it short (every other request waits while it runs). Returns the
  /// request id. A callback that throws aborts its own request only.
  ///
  /// Re-entrancy: inside `on_chunk` the calls that only queue work are allowed on the same engine
  /// (generate_streaming with a callback, start_transcription, push_audio / finish_audio, abort,
  /// metrics, pending_requests, running_requests, model_info, set_kv_event_listener,
  /// kv_cached_block_hashes). Calls that wait for the worker
  /// (generate, transcribe, synthesize, shutdown, and StreamHandle / TranscriptionStream::next on
  /// a stream that has nothing ready) would wait for the thread that is running the callback: they
  /// throw izwi::Error(InvalidArgument) instead of deadlocking. Destroying the last Engine inside its
  /// own callback is allowed: every live request then ends with FinishReason::Abort and the worker
  /// frees the engine after the current step.
  using ChunkCallback = std::function<void(const StreamChunk&)>;
  std::string generate_streaming(const Request& request, ChunkCallback on_chunk);  ///< See ChunkCallback.

  /// Starts a live transcription (speech models only; Unsupported otherwise).
  TranscriptionStream start_transcription(const TranscriptionOptions& options = TranscriptionOptions{});
  /// Transcribes a whole buffer of mono samples at `sample_rate`; blocks until done.
  Output transcribe(const std::vector<float>& samples, int32_t sample_rate,
                    const TranscriptionOptions& options = TranscriptionOptions{});

  /// Speech synthesis (models with ModelInfo::produces_audio; Unsupported otherwise): the whole
  /// audio in Output::audio, and each frame's codes in Output::audio_codes. Blocks until done.
  Output synthesize(const SpeechRequest& request);
  /// Returns at once; chunks carry PCM (StreamChunk::audio) as frames are decoded.
  StreamHandle synthesize_streaming(const SpeechRequest& request);

  /// Audio chat (models with ModelInfo::audio_chat; Unsupported otherwise): text tokens and audio
  /// frames in generation order (Output::item_is_frame), the text in Output::text, the frames'
  /// PCM in Output::audio when the model folder has its codec. The user audio is encoded on the
  /// calling thread. Blocks until done.
  Output audio_chat(const AudioChatRequest& request);
  /// Returns at once; chunks carry the items as they are generated.
  StreamHandle audio_chat_streaming(const AudioChatRequest& request);

  /// The voice of a few seconds of mono reference speech (`samples` at `sample_rate`, resampled as
  /// the model needs), for SpeechRequest::voice; compute it once and reuse it. Models with
  /// ModelInfo::clones_voices; Unsupported otherwise. InvalidArgument for audio that is too short
  /// (under half a second), silent, or not finite. Runs on the calling thread.
  /// With a transcript of the recording the voice is in-context: it also carries the transcript's
  /// ids and the recording's codec codes (the speech tokenizer's encoder; Unsupported when the
  /// model folder's codec has none), and the model continues the reference.
  Voice create_voice(const std::vector<float>& samples, int32_t sample_rate,
                     const VoiceTranscript& transcript = VoiceTranscript{});

  /// Aborts a live request (every choice of it); returns false if no live request has that id. Idempotent.
  bool abort(const std::string& request_id);

  MetricsSnapshot metrics() const;   ///< The counters now.
  int32_t pending_requests() const;  ///< Waiting to be scheduled (including preempted).
  int32_t running_requests() const;  ///< Holding KV blocks.

  /// KV-cache events (include/izwi/kv_events.h): after every step that changed the prefix cache,
  /// `listener` gets that step's events as one batch, on the worker thread, so it must be quick
  /// (queue or send, never wait). Setting a listener while blocks are cached first hands it the
  /// cache as it is (AllBlocksCleared, then a BlockStored for every block), so the events it sees
  /// rebuild kv_cached_block_hashes() exactly. An empty function removes the listener; without
  /// one no event is built. An exception from the listener is logged and its batch dropped.
  ///
  /// From a host thread it returns once the worker uses the new listener: the previous one is not
  /// running and is never called again. Inside a callback on the worker it takes effect before the
  /// next step. shutdown() and the destructor hand the listener a last batch (AllBlocksCleared), so
  /// what it uses must outlive the engine, or be detached first with an empty function.
  using KvEventListener = std::function<void(const KvEventBatch&)>;
  void set_kv_event_listener(KvEventListener listener);  ///< See KvEventListener.
  /// Hashes (docs/architecture.md, cache design) of every block the prefix cache holds now,
  /// sorted: the state after the last batch handed to the listener. Callable from any thread (from
  /// another it waits for the current step to end); empty once shut down.
  std::vector<uint64_t> kv_cached_block_hashes() const;

  /// Stops the worker; every in-flight request finishes with FinishReason::Abort. Idempotent.
  /// Waits for the worker, so it throws InvalidArgument inside a stream callback.
  void shutdown();

  const ModelInfo& model_info() const;  ///< What the loaded model is and takes.
  /// The model folder's tokenizer, or nullptr when it has none.
  const Tokenizer* tokenizer() const;
  const EngineConfig& config() const;  ///< The config the engine runs with.

 private:
  friend class detail::EngineImpl;
  std::shared_ptr<detail::EngineImpl> impl_;
};

}  // namespace izwi
