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

#include "izwi/config.h"
#include "izwi/errors.h"
#include "izwi/metrics.h"
#include "izwi/output.h"
#include "izwi/request.h"
#include "izwi/tokenizer.h"
#include "izwi/transcription.h"

namespace izwi {

namespace detail {
class EngineImpl;
class RequestChannel;
}  // namespace detail

/// Facts about the loaded model that callers need to build requests.
struct ModelInfo {
  std::string model_type;             ///< config.json model_type, e.g. "llama".
  int32_t vocab_size = 0;
  int32_t max_positions = 0;          ///< Longest prompt + output the engine accepts.
  std::vector<int32_t> eos_token_ids;
  std::optional<int32_t> bos_token_id;
  int64_t decode_weight_bytes = 0;    ///< Weight bytes one decode step reads (memory-bandwidth bound).
  bool has_tokenizer = false;         ///< The folder has tokenizer.json or tekken.json: text in and out.
  bool accepts_audio = false;         ///< Supports start_transcription / transcribe.
  int32_t audio_sample_rate = 0;      ///< Rate audio is resampled to, when accepts_audio.
};

/// A streamed request. next() blocks until the next chunk; destroying an unfinished handle
/// aborts the request. Movable, not copyable; safe to use from one thread at a time.
class StreamHandle {
 public:
  StreamHandle(StreamHandle&&) noexcept;
  StreamHandle& operator=(StreamHandle&&) noexcept;
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  ~StreamHandle();

  /// The request id (assigned by the engine if the request had none).
  const std::string& id() const;
  /// Blocks for the next chunk; std::nullopt once the finished chunk has been returned.
  std::optional<StreamChunk> next();
  /// Asks the engine to abort; the stream then ends with FinishReason::Abort. Idempotent.
  void abort();

 private:
  friend class Engine;
  StreamHandle(std::shared_ptr<detail::RequestChannel> channel, std::weak_ptr<detail::EngineImpl> engine);
  std::shared_ptr<detail::RequestChannel> channel_;
  std::weak_ptr<detail::EngineImpl> engine_;
};

/// Thread-safe engine façade. A worker thread runs the step loop (schedule, execute, process);
/// requests from many threads are batched together.
class Engine {
 public:
  /// Loads config.json + safetensors from `model_dir`. Throws izwi::Error naming the bad file,
  /// field or tensor.
  explicit Engine(const std::string& model_dir, const EngineConfig& config = EngineConfig{});
  /// Calls shutdown().
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Blocks until the request finishes. Throws izwi::Error for invalid input (before anything
  /// runs) and for failures inside the engine; an aborted request returns FinishReason::Abort.
  Output generate(const Request& request);

  /// Returns at once with a handle yielding chunks as tokens are produced.
  StreamHandle generate_streaming(const Request& request);

  /// Callback form: `on_chunk` runs on the engine's worker thread for every chunk, the last one
  /// with finished == true; keep it short. Returns the request id.
  using ChunkCallback = std::function<void(const StreamChunk&)>;
  std::string generate_streaming(const Request& request, ChunkCallback on_chunk);

  /// Starts a live transcription (speech models only; Unsupported otherwise).
  TranscriptionStream start_transcription(const TranscriptionOptions& options = TranscriptionOptions{});
  /// Transcribes a whole buffer of mono samples at `sample_rate`; blocks until done.
  Output transcribe(const std::vector<float>& samples, int32_t sample_rate,
                    const TranscriptionOptions& options = TranscriptionOptions{});

  /// Aborts a live request; returns false if no live request has that id. Idempotent.
  bool abort(const std::string& request_id);

  MetricsSnapshot metrics() const;
  int32_t pending_requests() const;   ///< Waiting to be scheduled (including preempted).
  int32_t running_requests() const;   ///< Holding KV blocks.

  /// Stops the worker; every in-flight request finishes with FinishReason::Abort. Idempotent.
  void shutdown();

  const ModelInfo& model_info() const;
  /// The model folder's tokenizer, or nullptr when it has none.
  const Tokenizer* tokenizer() const;
  const EngineConfig& config() const;

 private:
  friend class detail::EngineImpl;
  std::shared_ptr<detail::EngineImpl> impl_;
};

}  // namespace izwi
