#pragma once
// Feeding a file to a live transcription the way a microphone or a network source would.

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/cli_main.h"
#include "common/engine_options.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

namespace izwi::cli {

/// Library names in the transcription tools' errors and the flags that set them.
inline const FlagNames& transcription_flag_names() {
  static const FlagNames names = {{"TranscriptionOptions.pad_token_id", "--pad-id"},
                                  {"TranscriptionOptions.delay_tokens", "--delay-tokens"}};
  return names;
}

/// The KV positions a transcription of `seconds` of audio may fill, for a KV pool of this one
/// request: the audio's, its prompt and delay, and the text after it with continue_after_audio.
inline int64_t transcription_positions(const TranscriptionOptions& options, double seconds) {
  return audio_positions(seconds) + kTemplatePositions + std::max(options.delay_tokens, 0) +
         (options.continue_after_audio ? options.max_tokens_after_audio : 0);
}

/// `audio` (read before the engine loaded, to size its KV pool) as mono samples at the speech
/// model's rate (load_engine checked the model).
inline std::vector<float> audio_for(const Engine& engine, const AudioBuffer& audio) {
  return resample(to_mono(audio), audio.sample_rate, engine.model_info().audio_sample_rate);
}

/// Pushes `samples` (mono, at `rate`) into a new transcription stream in `chunk_ms` pieces from a
/// producer thread, at the audio's own pace when `realtime`, while this thread reads what is
/// decoded and hands each chunk to `on_chunk`. Returns the whole result; rethrows a failure. With
/// one chunk of the whole file and no `realtime` this is Engine::transcribe, read as it decodes.
inline Output transcribe_streamed(Engine& engine, const std::vector<float>& samples, int32_t rate,
                                  const TranscriptionOptions& options, double chunk_ms, bool realtime,
                                  const std::function<void(const StreamChunk&)>& on_chunk) {
  using Clock = std::chrono::steady_clock;
  TranscriptionStream stream = engine.start_transcription(options);
  const size_t chunk = std::max<size_t>(1, static_cast<size_t>(chunk_ms * rate / 1000.0));
  std::exception_ptr producer_error;
  std::thread producer([&] {
    try {
      const Clock::time_point start = Clock::now();
      for (size_t pos = 0; pos < samples.size(); pos += chunk) {
        const size_t n = std::min(chunk, samples.size() - pos);
        // A live source delivers a chunk once all of it has been recorded.
        if (realtime) std::this_thread::sleep_until(start + std::chrono::duration<double>(double(pos + n) / rate));
        stream.push_audio(samples.data() + pos, n, rate);
      }
      stream.finish_audio();
    } catch (...) {
      producer_error = std::current_exception();
      stream.abort();  // ends the reader's loop below
    }
  });
  Output out;
  out.request_id = stream.id();
  std::optional<Error> failure;
  while (std::optional<StreamChunk> piece = stream.next()) {
    out.tokens.insert(out.tokens.end(), piece->tokens.begin(), piece->tokens.end());
    out.text += piece->text;
    on_chunk(*piece);
    if (piece->finished) {
      out.finish_reason = piece->finish_reason;
      out.timings = piece->timings;
      if (piece->finish_reason == FinishReason::Error) failure.emplace(piece->error_code, piece->error);
    }
  }
  producer.join();
  if (producer_error) std::rethrow_exception(producer_error);
  if (failure) throw *failure;
  return out;
}

}  // namespace izwi::cli
