#pragma once
// The engine behind the public façade: a worker thread owning the EngineCore, a command queue
// filled from any thread, and the set of live request ids. Commands that arrive while a step
// executes wait in the queue and are applied before the next schedule.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "engine/engine_core.h"
#include "engine/metrics_collector.h"
#include "engine/request_channel.h"
#include "engine/request_processor.h"
#include "izwi/engine.h"
#include "structured/constraint_factory.h"

namespace izwi::detail {

class EngineImpl : public std::enable_shared_from_this<EngineImpl> {
 public:
  /// Loads the model on a new worker thread and starts its loop. The worker holds a reference to
  /// the engine while its loop runs, so the last public reference may be dropped anywhere, even in
  /// a stream callback on the worker itself (the engine then shuts down and is freed by the worker).
  static std::shared_ptr<EngineImpl> create(const std::string& model_dir, const EngineConfig& config);
  /// Validates the config; create() is the way to get a running engine.
  explicit EngineImpl(const EngineConfig& config);
  ~EngineImpl();

  /// True on this engine's worker thread (inside a stream callback or a run_on_worker function).
  bool on_worker_thread() const;
  /// Throws InvalidArgument when called on this engine's worker thread: `what` would wait for the
  /// worker, which is busy running the caller, and so never return.
  void check_not_on_worker(const char* what) const;

  /// Validates on the caller's thread, then queues the request.
  std::shared_ptr<RequestChannel> submit(const Request& request, RequestChannel::Mode mode,
                                         RequestChannel::Callback callback = {});
  /// Validates and queues a speech request (input limited by the audio pushed so far).
  std::shared_ptr<RequestChannel> submit_transcription(const TranscriptionOptions& options);
  /// Validates and queues a speech synthesis request.
  std::shared_ptr<RequestChannel> submit_speech(const SpeechRequest& request, RequestChannel::Mode mode);
  std::shared_ptr<RequestChannel> submit_audio_chat(const AudioChatRequest& request, RequestChannel::Mode mode);
  /// The model's voice of reference audio, computed on the caller's thread.
  Voice create_voice(const std::vector<float>& samples, int32_t sample_rate, const VoiceTranscript& transcript) const;
  /// Audio at the model's rate for a live speech request, and its end.
  void push_audio(const std::string& request_id, std::vector<float> samples);
  void finish_audio(const std::string& request_id);
  bool abort(const std::string& request_id);
  /// Stops accepting work and aborts every live request. From a host thread it waits for the
  /// worker to end; on the worker thread (an Engine dropped in its own callback) it only asks the
  /// loop to stop after the current step.
  void shutdown();

  /// Engine::set_kv_event_listener: the worker picks the listener up at its next command drain.
  void set_kv_event_listener(Engine::KvEventListener listener);
  /// Engine::kv_cached_block_hashes: read on the worker between steps.
  std::vector<uint64_t> kv_cached_block_hashes();

  /// Runs `fn` on the worker thread between steps and waits for it (tests, introspection).
  void run_on_worker(const std::function<void(EngineCore&)>& fn);
  /// Runs `fn` on the worker at every step boundary until it returns true, and waits for that:
  /// tests act at an exact point of a request's life without racing the steps.
  void run_on_worker_until(const std::function<bool(EngineCore&)>& fn);

  /// The implementation behind a public Engine (tests reach internals through it).
  static EngineImpl& of(Engine& engine) { return *engine.impl_; }

  MetricsSnapshot metrics() const { return metrics_.snapshot(); }
  /// Live requests (each choice of one) not yet holding KV blocks (including ones still in the
  /// command queue).
  int32_t pending_requests();
  const ModelInfo& model_info() const { return info_; }
  const Tokenizer* tokenizer() const { return tokenizer_ ? &*tokenizer_ : nullptr; }
  const EngineConfig& config() const { return config_; }

 private:
  struct Command {
    enum class Kind { Add, Abort, PushAudio, FinishAudio, Call, Shutdown } kind;
    std::unique_ptr<ActiveRequest> request;
    std::string request_id;
    std::function<void(EngineCore&)> call;
    std::vector<float> samples;
  };

  /// Starts the worker thread: load, then the loop, holding `self` until the loop ends.
  void start(const std::string& model_dir);
  /// Loads the model and builds the core; runs on the worker thread before its loop.
  void load(const std::string& model_dir);
  void worker_loop();
  /// Worker: starts using the listener last set (recording events only while there is one).
  void adopt_kv_listener(std::shared_ptr<const Engine::KvEventListener> listener);
  /// Worker: hands the events recorded since the last call to the listener as one batch, followed
  /// by an AllBlocksCleared when `closing` (the engine's cache goes away with it).
  void publish_kv_events(bool closing = false);
  struct RepeatedCall {
    std::function<bool(EngineCore&)> fn;
    std::promise<void> done;
  };
  Command repeated_call_command(const std::shared_ptr<RepeatedCall>& call);
  /// What speech synthesis and audio chat requests share when they are queued.
  struct AudioOutRequest {
    const char* what;  ///< "speech request", for messages
    const std::string& id;
    int32_t priority;
    int32_t first_chunk_frames, chunk_frames;
    bool audio_chat;  ///< Text tokens and frames in one stream (else frames only, no text).
    /// The sampling of the main head and of the per-frame head, with the caller's names for them.
    const SamplingParams& sampling;
    const char* sampling_field;
    const SamplingParams& codebook_sampling;
    const char* codebook_field;
    std::optional<uint64_t> seed;
  };
  /// Resolves the request into the model's prompt (errors prefixed with `what` and the id) and
  /// queues it with its state and chunk sizes.
  std::shared_ptr<RequestChannel> submit_audio_out(const AudioOutRequest& request,
                                                   const std::function<SpeechPrompt()>& resolve,
                                                   RequestChannel::Mode mode);
  /// The worker's record of `request`, delivering through `channel`.
  std::unique_ptr<ActiveRequest> make_active_request(const Request& request,
                                                     std::shared_ptr<RequestChannel> channel) const;
  /// `capability` (one of capabilities_'s interfaces), or Unsupported naming what the model is,
  /// then `refusal`.
  template <class Interface>
  const Interface& require(const Interface* capability, const char* refusal) const;
  /// Registers the request's id as live and queues it; throws if taken or shutting down.
  void enqueue(std::unique_ptr<ActiveRequest> request);
  /// enqueue for the choices of one request (GenerationParams::n), which share its id; choice 0 first.
  void enqueue_choices(std::vector<std::unique_ptr<ActiveRequest>> choices);
  void enqueue_command(Command command);
  std::string next_id();

  EngineConfig config_;
  ModelInfo info_;
  std::optional<Tokenizer> tokenizer_;
  /// Structured outputs: each request's constraint, compiled schemas cached by their text.
  std::unique_ptr<structured::ConstraintFactory> constraints_;
  const CausalLM* model_ = nullptr;  ///< Owned by the executor; immutable.
  ModelCapabilities capabilities_;   ///< The model's, asked once at load; ModelInfo's flags say the same.
  RequestLimits limits_;
  MetricsCollector metrics_;
  std::unique_ptr<EngineCore> core_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Command> commands_;
  /// One entry per live choice (GenerationParams::n) of each live request.
  std::unordered_multiset<std::string> live_ids_;
  bool accepting_ = true;
  uint64_t next_request_number_ = 1;
  std::shared_ptr<const Engine::KvEventListener> new_kv_listener_;  ///< Set from any thread, under mutex_.
  bool kv_listener_changed_ = false;                                ///< Under mutex_.
  std::shared_ptr<const Engine::KvEventListener> kv_listener_;      ///< The worker's; null = no events.
  std::thread worker_;
};

}  // namespace izwi::detail
