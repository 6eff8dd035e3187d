// izwi-stream-transcribe: a live transcription. The file is played into the engine at its own
// pace, as a microphone would deliver it, and text is printed as each 80 ms is decoded.
//
//   izwi-stream-transcribe --model DIR --audio FILE [--chunk-ms 80] [--pad-id N] [--fast]
//
// At the end it prints how long the last text came after the end of the audio.

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/streamed_transcription.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Transcribe an audio file as a live stream with izwi"};
  std::string model_dir, audio_path;
  double chunk_ms = 80;
  int32_t pad_id = 0;
  bool fast = false;
  app.add_option("--model", model_dir, "Speech model folder (config.json + safetensors + tokenizer)")->required();
  app.add_option("--audio", audio_path, "Audio file (WAV, FLAC, OGG, MP3)")->required();
  app.add_option("--chunk-ms", chunk_ms, "Audio per push")->capture_default_str()->check(CLI::PositiveNumber);
  auto* pad_opt = app.add_option("--pad-id", pad_id, "Streaming pad token id (default: from the tokenizer)");
  app.add_flag("--fast", fast, "Push as fast as possible instead of at the audio's pace");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-stream-transcribe", [&] {
    izwi::TranscriptionOptions options;
    if (pad_opt->count() > 0) options.pad_token_id = pad_id;
    izwi::Engine engine(model_dir);
    const std::vector<float> samples = izwi::cli::load_audio_for(engine, model_dir, audio_path);
    const int32_t rate = engine.model_info().audio_sample_rate;
    const auto start = std::chrono::steady_clock::now();
    const izwi::Output out =
        izwi::cli::transcribe_streamed(engine, samples, rate, options, chunk_ms, !fast,
                                       [](const std::string& text) { std::cout << text << std::flush; });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "\n[" << out.tokens.size() << " tokens, " << static_cast<double>(samples.size()) / rate
              << " s of audio, done " << elapsed - static_cast<double>(samples.size()) / rate << " s after its end]\n";
    return 0;
  });
}
