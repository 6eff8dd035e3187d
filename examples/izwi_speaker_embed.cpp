// izwi-speaker-embed: the x-vector of a reference voice (Qwen3-TTS Base speaker encoder).
//
//   izwi-speaker-embed --model DIR --audio FILE [--device cuda] [--dtype bfloat16] [--json]
//
// DIR is a Qwen3-TTS Base folder (config.json with speaker_encoder_config, speaker_encoder.*
// weights). FILE is any audio the reader takes (WAV, FLAC, OGG, MP3), mixed to mono and resampled
// to the encoder's rate. --json prints one line {"xvector":[...],"sample_rate":24000}; otherwise a
// summary. The encoder runs on --device in --dtype (the CPU in float32 by default).

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/engine_options.h"
#include "common/shared_options.h"
#include "izwi/audio.h"
#include "izwi/config.h"
#include "kernels/backend.h"
#include "models/qwen3_tts/speaker_encoder.h"

int main(int argc, char** argv) {
  CLI::App app{"Compute the speaker x-vector of a reference voice with izwi"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "Qwen3-TTS Base model folder"});
  std::string audio_path;
  app.add_option("--audio", audio_path, "Reference audio file")->required();
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-speaker-embed", [&] {
    izwi::cli::apply_log_level(shared);
    izwi::EngineConfig config;
    izwi::cli::apply_shared_engine_options(shared, config);
    const izwi::Backend backend(izwi::BackendOptions::from_config(config));
    const izwi::SpeakerEncoder encoder = izwi::load_speaker_encoder(shared.model, backend);
    const int32_t rate = encoder.config().sample_rate;
    const std::vector<float> audio = izwi::load_audio_mono(audio_path, rate);
    const at::Tensor xvector = encoder.embed(at::tensor(audio)).contiguous();
    const std::vector<float> values(xvector.data_ptr<float>(), xvector.data_ptr<float>() + xvector.numel());
    if (shared.json) {
      std::cout << nlohmann::json{{"xvector", values}, {"sample_rate", rate}}.dump() << "\n";
    } else {
      std::cout << "x-vector of " << values.size() << " values from " << static_cast<double>(audio.size()) / rate
                << " s of audio; L2 norm " << xvector.norm().item<double>() << "\n";
    }
    return 0;
  });
}
