// izwi-transcribe: speech recognition of an audio file with a streaming speech model.
//
//   izwi-transcribe --model DIR --audio FILE [--stream] [--chunk-ms 80] [--realtime]
//                   [--delay-tokens 6] [--pad-id N] [--continue] [--json]
//
// Without --stream the whole file is transcribed at once (Engine::transcribe). With --stream the
// file is pushed in --chunk-ms pieces as a live source would deliver it (as fast as possible, or
// at the audio's own pace with --realtime) and text is printed as it is decoded. With --json one
// line is printed: {"tokens":[...],"text":"...","audio_seconds":x,"rtf":y}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "izwi/audio.h"
#include "izwi/engine.h"

namespace {

using Clock = std::chrono::steady_clock;

// Feeds `samples` in chunks from a producer thread while this thread reads what is decoded.
izwi::Output transcribe_streamed(izwi::Engine& engine, const std::vector<float>& samples, int32_t rate,
                                 const izwi::TranscriptionOptions& options, double chunk_ms, bool realtime,
                                 bool print_text) {
  izwi::TranscriptionStream stream = engine.start_transcription(options);
  const size_t chunk = std::max<size_t>(1, static_cast<size_t>(chunk_ms * rate / 1000.0));
  std::exception_ptr producer_error;
  std::thread producer([&] {
    try {
      const Clock::time_point start = Clock::now();
      for (size_t pos = 0; pos < samples.size(); pos += chunk) {
        if (realtime) std::this_thread::sleep_until(start + std::chrono::duration<double>(double(pos) / rate));
        stream.push_audio(samples.data() + pos, std::min(chunk, samples.size() - pos), rate);
      }
      stream.finish_audio();
    } catch (...) {
      producer_error = std::current_exception();
    }
  });
  izwi::Output out;
  out.request_id = stream.id();
  std::optional<izwi::Error> failure;
  while (std::optional<izwi::StreamChunk> piece = stream.next()) {
    out.tokens.insert(out.tokens.end(), piece->tokens.begin(), piece->tokens.end());
    out.text += piece->text;
    if (print_text) std::cout << piece->text << std::flush;
    if (piece->finished) {
      out.finish_reason = piece->finish_reason;
      out.timings = piece->timings;
      if (piece->finish_reason == izwi::FinishReason::Error) failure.emplace(piece->error_code, piece->error);
    }
  }
  producer.join();
  if (producer_error) std::rethrow_exception(producer_error);
  if (failure) throw *failure;
  if (print_text) std::cout << "\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Transcribe an audio file with izwi"};
  std::string model_dir, audio_path;
  bool stream = false, realtime = false, json = false;
  double chunk_ms = 80;
  int32_t pad_id = 0;
  izwi::TranscriptionOptions options;
  app.add_option("--model", model_dir, "Model folder (config.json + safetensors + tokenizer)")->required();
  app.add_option("--audio", audio_path, "Audio file (WAV, FLAC, OGG, MP3)")->required();
  app.add_flag("--stream", stream, "Push the file in chunks as a live source would");
  app.add_option("--chunk-ms", chunk_ms, "Chunk length with --stream")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_flag("--realtime", realtime, "With --stream, push chunks at the audio's own pace");
  app.add_option("--delay-tokens", options.delay_tokens, "Streaming delay in 80 ms positions (default: the model's)");
  auto* pad_opt = app.add_option("--pad-id", pad_id, "Streaming pad token id (default: from the tokenizer)");
  app.add_flag("--continue", options.continue_after_audio, "Keep decoding text after the audio until EOS");
  app.add_flag("--json", json, "Print one JSON object");
  CLI11_PARSE(app, argc, argv);

  try {
    if (pad_opt->count() > 0) options.pad_token_id = pad_id;
    izwi::Engine engine(model_dir);
    const int32_t rate = engine.model_info().audio_sample_rate;
    if (!engine.model_info().accepts_audio) {
      throw izwi::Error(izwi::ErrorCode::Unsupported, "model '" + model_dir + "' does not transcribe audio");
    }
    const std::vector<float> samples = izwi::load_audio_mono(audio_path, rate);
    const double audio_seconds = static_cast<double>(samples.size()) / rate;

    const Clock::time_point start = Clock::now();
    const izwi::Output out = stream ? transcribe_streamed(engine, samples, rate, options, chunk_ms, realtime, !json)
                                    : engine.transcribe(samples, rate, options);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (json) {
      nlohmann::json line = {{"tokens", out.tokens},
                             {"text", out.text},
                             {"audio_seconds", audio_seconds},
                             {"rtf", seconds / audio_seconds}};
      std::cout << line.dump() << "\n";
    } else if (!stream) {
      std::cout << out.text << "\n";
    }
  } catch (const izwi::Error& e) {
    std::cerr << "izwi-transcribe: " << izwi::to_string(e.code()) << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "izwi-transcribe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
