#pragma once
/// @file transcription.h
/// Speech recognition with streaming speech models (Voxtral Realtime): whole files or buffers,
/// and live streams that receive audio in chunks and yield text tokens as each 80 ms is decoded.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "izwi/export.h"
#include "izwi/output.h"
#include "izwi/sampling.h"
#include "izwi/stream_handle.h"

namespace izwi {

namespace detail {
class AudioFeed;
}  // namespace detail

/// Controls of a speech-recognition request.
struct TranscriptionOptions {
  std::string id;                       ///< Unique among live requests; empty = engine assigns one.
  int32_t priority = 0;                 ///< Larger runs first under SchedulingPolicy::Priority.
  int32_t delay_tokens = -1;            ///< Streaming delay in positions (80 ms each), 0..512; -1 = model default.
  std::optional<int32_t> pad_token_id;  ///< Streaming pad token; default from the model's tokenizer.
  bool continue_after_audio = false;    ///< After the audio's positions, keep decoding text until EOS...
  int32_t max_tokens_after_audio = 64;  ///< ...or this many extra positions.
  SamplingParams sampling;              ///< Unset fields: the model's defaults (greedy unless it says).
  std::optional<uint64_t> seed;         ///< Fixed seed for reproducible sampling.
};

/// A live transcription: push audio as it arrives, read tokens as they are decoded. Destroying an
/// unfinished stream aborts it. One thread may push (push_audio, finish_audio) while another
/// reads (next); abort() may come from either. A token is delivered once the audio of its position
/// has arrived or the audio has ended, so streamed tokens always equal offline decoding.
class IZWI_API TranscriptionStream {
 public:
  TranscriptionStream(TranscriptionStream&&) noexcept;             ///< Takes over the stream.
  TranscriptionStream& operator=(TranscriptionStream&&) noexcept;  ///< Takes over the stream.
  ~TranscriptionStream();

  const std::string& id() const { return stream_.id(); }  ///< The request's id (Engine::abort takes it).
  /// Appends mono PCM samples at `sample_rate` (resampled to the model's rate); any chunk size.
  /// Throws InvalidArgument for a bad rate or non-finite samples, Aborted after finish_audio().
  void push_audio(const float* samples, size_t count, int32_t sample_rate);
  /// Marks the end of the audio; decoding ends once its positions are used (see TranscriptionOptions).
  void finish_audio();
  /// Blocks for the next chunk of tokens; std::nullopt after the finished chunk was returned.
  std::optional<StreamChunk> next() { return stream_.next(); }
  /// Aborts the request (idempotent).
  void abort() { stream_.abort(); }

 private:
  friend class Engine;
  TranscriptionStream(StreamHandle stream, std::unique_ptr<detail::AudioFeed> feed);
  StreamHandle stream_;  ///< Delivery and abort, shared with every other streamed request.
  std::unique_ptr<detail::AudioFeed> feed_;
};

}  // namespace izwi
