// izwi-codec: decodes audio codec codes to a 24 kHz waveform (Qwen3-TTS 12 Hz speech tokenizer).
//
//   izwi-codec --model DIR --codes-file F.json [--chunk-frames N] [--out FILE.wav] [--json]
//
// DIR is a codec folder (speech_tokenizer/ or a decoder-only folder) or a Qwen3-TTS model folder
// holding speech_tokenizer/. F.json holds a [codebooks][frames] array of integers. With
// --chunk-frames the codes go through the streaming decoder N frames at a time. --out writes a
// float WAV; --json prints one line {"sample_rate":24000,"samples":[...]}; otherwise a summary.

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "codec/codec_decoder.h"
#include "common/check.h"
#include "common/cli_main.h"
#include "common/json_fields.h"
#include "izwi/audio.h"

namespace {

/// [codebooks][frames] integers -> int64 tensor [codebooks, frames].
at::Tensor read_codes(const std::string& path) {
  const nlohmann::json json = izwi::read_json_file(path);
  if (!json.is_array() || json.empty()) {
    izwi::fail(izwi::ErrorCode::InvalidFormat, "{}: expected a [codebooks][frames] array of integers", path);
  }
  const size_t frames = json[0].is_array() ? json[0].size() : 0;
  std::vector<int64_t> values;
  for (size_t k = 0; k < json.size(); ++k) {
    if (!json[k].is_array() || json[k].size() != frames) {
      izwi::fail(izwi::ErrorCode::InvalidFormat, "{}: codebook {} is not an array of {} frames", path, k, frames);
    }
    for (size_t t = 0; t < frames; ++t) {
      if (!json[k][t].is_number_integer()) {
        izwi::fail(izwi::ErrorCode::InvalidFormat, "{}: codebook {}, frame {} is not an integer", path, k, t);
      }
      values.push_back(json[k][t].get<int64_t>());
    }
  }
  return at::tensor(values, at::kLong).view({static_cast<int64_t>(json.size()), static_cast<int64_t>(frames)});
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode audio codec codes to a waveform with izwi"};
  std::string model_dir, codes_path, out_path;
  int64_t chunk_frames = 0;
  bool json = false;
  app.add_option("--model", model_dir, "Codec folder, or a Qwen3-TTS folder with speech_tokenizer/")->required();
  app.add_option("--codes-file", codes_path, "JSON file: [codebooks][frames] integer codes")->required();
  app.add_option("--chunk-frames", chunk_frames, "Decode through the streaming path N frames at a time")
      ->check(CLI::PositiveNumber);
  app.add_option("--out", out_path, "Write the waveform as a float WAV file");
  app.add_flag("--json", json, "Print one JSON object with the samples");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "izwi-codec: " << izwi::to_string(izwi::ErrorCode::InvalidArgument) << ": " << e.what() << "\n";
    return 1;
  }

  return izwi::cli::run_main("izwi-codec", [&] {
    const at::Tensor codes = read_codes(codes_path);
    const auto codec = izwi::load_codec_decoder(model_dir, at::kFloat, at::kCPU);
    const auto start = std::chrono::steady_clock::now();
    at::Tensor wav;
    if (chunk_frames > 0) {
      const auto state = codec->new_state();
      std::vector<at::Tensor> pieces;
      for (int64_t f = 0; f < codes.size(1); f += chunk_frames) {
        const at::Tensor chunk = codes.narrow(1, f, std::min(chunk_frames, codes.size(1) - f));
        pieces.push_back(codec->decode_streaming({state.get()}, {chunk})[0]);
      }
      wav = pieces.empty() ? codec->decode(codes) : at::cat(pieces);
    } else {
      wav = codec->decode(codes);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    wav = wav.contiguous();
    const std::vector<float> samples(wav.data_ptr<float>(), wav.data_ptr<float>() + wav.numel());
    if (!out_path.empty()) izwi::write_wav(out_path, samples, codec->sample_rate());
    if (json) {
      std::cout << nlohmann::json{{"sample_rate", codec->sample_rate()}, {"samples", samples}}.dump() << "\n";
    } else {
      const double audio_seconds = static_cast<double>(samples.size()) / codec->sample_rate();
      std::cout << codes.size(1) << " frames -> " << samples.size() << " samples (" << audio_seconds << " s) in "
                << seconds << " s\n";
    }
    return 0;
  });
}
