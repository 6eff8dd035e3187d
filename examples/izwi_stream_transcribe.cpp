// izwi-stream-transcribe: a live transcription. The file is played into the engine at its own
// pace, as a microphone would deliver it, and text is printed as each 80 ms is decoded.
//
//   izwi-stream-transcribe --model DIR --audio FILE [--chunk-ms 80] [--pad-id N] [--fast]
//                          [shared options: --help]
//
// The KV pool holds this one file's transcription unless --kv-blocks or --config sets it.
// At the end it prints how long the last text came after the end of the audio; with --json one
// line instead: {"tokens":[...],"text":"...","audio_seconds":x,"done_after_end_s":y}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/engine_options.h"
#include "common/shared_options.h"
#include "common/streamed_transcription.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Transcribe an audio file as a live stream with izwi"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kEngineTool & ~izwi::cli::kMaxTokensOption,
                                 "Speech recognition model folder (config.json + safetensors + tokenizer)"});
  std::string audio_path;
  double chunk_ms = 80;
  int32_t pad_id = 0;
  bool fast = false;
  app.add_option("--audio", audio_path, "Audio file (WAV, FLAC, OGG, MP3)")->required();
  app.add_option("--chunk-ms", chunk_ms, "Audio per push")->capture_default_str()->check(CLI::PositiveNumber);
  auto* pad_opt = app.add_option("--pad-id", pad_id, "Streaming pad token id (default: from the tokenizer)");
  app.add_flag("--fast", fast, "Push as fast as possible instead of at the audio's pace");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-stream-transcribe", izwi::cli::transcription_flag_names(), [&] {
    izwi::TranscriptionOptions options;
    if (pad_opt->count() > 0) options.pad_token_id = pad_id;
    options.sampling = shared.sampling();
    options.seed = shared.seed;
    const izwi::AudioBuffer audio = izwi::read_audio(audio_path);
    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, {izwi::cli::transcription_positions(options, audio.seconds())}),
        izwi::cli::ModelUse::Transcription);
    const std::vector<float> samples = izwi::cli::audio_for(*engine, audio);
    const int32_t rate = engine->model_info().audio_sample_rate;
    const auto start = std::chrono::steady_clock::now();
    const bool json = shared.json;
    const izwi::Output out = izwi::cli::transcribe_streamed(*engine, samples, rate, options, chunk_ms, !fast,
                                                            [json](const izwi::StreamChunk& chunk) {
                                                              if (!json) std::cout << chunk.text << std::flush;
                                                            });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double audio_seconds = static_cast<double>(samples.size()) / rate;
    if (json) {
      std::cout << nlohmann::json{{"tokens", out.tokens},
                                  {"text", out.text},
                                  {"audio_seconds", audio_seconds},
                                  {"done_after_end_s", elapsed - audio_seconds}}
                       .dump()
                << "\n";
    } else {
      std::cout << "\n[" << out.tokens.size() << " tokens, " << audio_seconds << " s of audio, done "
                << elapsed - audio_seconds << " s after its end]\n";
    }
    return 0;
  });
}
