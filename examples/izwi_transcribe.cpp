// izwi-transcribe: speech recognition of an audio file with a streaming speech model.
//
//   izwi-transcribe --model DIR --audio FILE [--stream] [--chunk-ms 80] [--realtime]
//                   [--delay-tokens 6] [--pad-id N] [--continue] [shared options: --help]
//
// Without --stream the whole file is transcribed at once (as Engine::transcribe does), with a
// progress bar on a terminal (not with --json). The KV pool holds this one file's transcription
// unless --kv-blocks or --config sets it. With --stream the
// file is pushed in --chunk-ms pieces as a live source would deliver it (as fast as possible, or
// at the audio's own pace with --realtime) and text is printed as it is decoded. With --json one
// line is printed: {"tokens":[...],"text":"...","audio_seconds":x,"rtf":y}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/engine_options.h"
#include "common/progress_bar.h"
#include "common/shared_options.h"
#include "common/streamed_transcription.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Transcribe an audio file with izwi"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kEngineTool & ~izwi::cli::kMaxTokensOption,
                                 "Speech recognition model folder (config.json + safetensors + tokenizer)"});
  std::string audio_path;
  bool stream = false, realtime = false;
  double chunk_ms = 80;
  int32_t pad_id = 0;
  izwi::TranscriptionOptions options;
  app.add_option("--audio", audio_path, "Audio file (WAV, FLAC, OGG, MP3)")->required();
  app.add_flag("--stream", stream, "Push the file in chunks as a live source would");
  app.add_option("--chunk-ms", chunk_ms, "Chunk length with --stream")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--realtime", realtime, "With --stream, push chunks at the audio's own pace");
  app.add_option("--delay-tokens", options.delay_tokens, "Streaming delay in 80 ms positions (default: the model's)");
  auto* pad_opt = app.add_option("--pad-id", pad_id, "Streaming pad token id (default: from the tokenizer)");
  app.add_flag("--continue", options.continue_after_audio, "Keep decoding text after the audio until EOS");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-transcribe", izwi::cli::transcription_flag_names(), [&] {
    if (pad_opt->count() > 0) options.pad_token_id = pad_id;
    options.sampling = shared.sampling();
    options.seed = shared.seed;
    const izwi::AudioBuffer audio = izwi::read_audio(audio_path);
    const int64_t positions = izwi::cli::audio_positions(audio.seconds());
    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, {izwi::cli::transcription_positions(options, audio.seconds())}),
        izwi::cli::ModelUse::Transcription);
    const std::vector<float> samples = izwi::cli::audio_for(*engine, audio);
    const int32_t rate = engine->model_info().audio_sample_rate;
    const double audio_seconds = static_cast<double>(samples.size()) / rate;

    const auto start = std::chrono::steady_clock::now();
    const bool json = shared.json;
    // Streamed, the text printed as it comes is the progress; whole, a bar counts the positions
    // decoded (one token each) of the audio's.
    izwi::cli::ProgressBar bar("transcribing " + audio_path, !stream && izwi::cli::ProgressBar::wanted(json), "s",
                               0.08);
    int64_t decoded = 0;
    const auto on_chunk = [&](const izwi::StreamChunk& chunk) {
      if (stream && !json) std::cout << chunk.text << std::flush;
      decoded += static_cast<int64_t>(chunk.tokens.size());
      bar.update(chunk.finished ? positions : std::min(decoded, positions - 1), positions);
    };
    const izwi::Output out = izwi::cli::transcribe_streamed(
        *engine, samples, rate, options, stream ? chunk_ms : 1000.0 * audio_seconds + 1, stream && realtime, on_chunk);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      nlohmann::json line = {{"tokens", out.tokens},
                             {"text", out.text},
                             {"audio_seconds", audio_seconds},
                             {"rtf", seconds / audio_seconds}};
      std::cout << line.dump() << "\n";
    } else {
      std::cout << (stream ? "" : out.text) << "\n";
    }
    return 0;
  });
}
