// izwi-codec: decodes audio codec codes to a waveform, or encodes audio to codes (Qwen3-TTS 12 Hz
// speech tokenizer, Mimi).
//
//   izwi-codec --model PATH --codes-file F.json [--chunk-frames N] [--num-codebooks K] [--out FILE.wav] [--json]
//   izwi-codec --model PATH --encode AUDIO [--num-codebooks K] [--codes-out F.json] [--json]
//
// PATH is a codec folder (speech_tokenizer/, a decoder-only folder, a transformers Mimi folder),
// a model folder holding one (Qwen3-TTS speech_tokenizer/, LFM2-Audio tokenizer-*.safetensors)
// or a moshi Mimi .safetensors file. F.json holds a [codebooks][frames] array of integers. The
// codes go through the streaming decoder 128 frames at a time (N with --chunk-frames; then a bad
// code fails at its chunk) and the audio is written as it comes: memory does not grow with the
// number of frames. --num-codebooks picks how many codebooks a Mimi decodes or an encoder
// returns. Decoding: --out writes a 16-bit WAV (32-bit float with --float); --json prints one line
// {"sample_rate":24000,"samples":[...]}. Encoding (any audio file the reader takes, mixed to mono
// and resampled to the codec's rate): --codes-out writes F.json; --json prints {"codes":[[...]]}.
// Otherwise a summary line.

#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "codec/codec_decoder.h"
#include "codec/codec_encoder.h"
#include "common/check.h"
#include "common/cli_main.h"
#include "common/json_fields.h"
#include "common/retain_freed_memory.h"
#include "common/shared_options.h"
#include "izwi/audio.h"
#include "kernels/backend.h"

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

/// codes [codebooks, frames] -> [codebooks][frames] JSON.
nlohmann::json codes_json(const at::Tensor& codes) {
  const at::Tensor c = codes.to(at::kLong).contiguous();
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t k = 0; k < c.size(0); ++k) {
    rows.push_back(std::vector<int64_t>(c[k].data_ptr<int64_t>(), c[k].data_ptr<int64_t>() + c.size(1)));
  }
  return rows;
}

int encode(const izwi::Backend& backend, const std::string& model, const std::string& audio_path, int32_t num_codebooks,
           const std::string& out_path, bool json) {
  const auto codec = izwi::load_codec_encoder(model, backend);
  const std::vector<float> samples = izwi::load_audio_mono(audio_path, codec->sample_rate());
  const auto start = std::chrono::steady_clock::now();
  const at::Tensor codes = codec->encode(at::tensor(samples, at::kFloat), num_codebooks);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!out_path.empty()) {
    std::ofstream out(out_path);
    out << codes_json(codes).dump() << "\n";
    if (!out) izwi::fail(izwi::ErrorCode::InvalidArgument, "cannot write '{}'", out_path);
  }
  if (json) {
    std::cout << nlohmann::json{{"codes", codes_json(codes)}}.dump() << "\n";
  } else {
    std::cout << samples.size() << " samples -> " << codes.size(1) << " frames x " << codes.size(0) << " codebooks in "
              << seconds << " s\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decode audio codec codes to a waveform, or encode audio to codes, with izwi"};
  std::string codes_path, out_path, encode_path, codes_out_path;
  int64_t chunk_frames = 0;
  int32_t num_codebooks = 0;
  bool float_wav = false;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kModelOption | izwi::cli::kThreadsOption | izwi::cli::kOutputOptions,
                                 "Codec folder or file, or a model folder holding its codec"});
  CLI::Option* codes_option =
      app.add_option("--codes-file", codes_path, "JSON file: [codebooks][frames] integer codes");
  CLI::Option* encode_option = app.add_option("--encode", encode_path, "Encode this audio file to codes");
  codes_option->excludes(encode_option);
  app.add_option("--chunk-frames", chunk_frames, "Decode through the streaming path N frames at a time")
      ->check(CLI::PositiveNumber)
      ->excludes(encode_option);
  app.add_option("--num-codebooks", num_codebooks, "Codebooks to decode or encode (default: the codec's)")
      ->check(CLI::PositiveNumber);
  auto* out_option =
      app.add_option("--out", out_path, "Write the waveform as a 16-bit WAV file")->excludes(encode_option);
  app.add_flag("--float", float_wav, "With --out: 32-bit float samples instead of 16-bit")->needs(out_option);
  app.add_option("--codes-out", codes_out_path, "Write the codes as a JSON file")->needs(encode_option);
  try {
    app.parse(argc, argv);
    if (codes_option->count() == 0 && encode_option->count() == 0) {
      throw CLI::RequiredError("--codes-file or --encode");
    }
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "izwi-codec: " << izwi::to_string(izwi::ErrorCode::InvalidArgument) << ": " << e.what() << "\n";
    return 1;
  }

  return izwi::cli::run_main("izwi-codec", [&] {
    // The engine's CPU setup (engine/engine_impl.cpp): without it libtorch runs one thread.
    izwi::cli::apply_log_level(shared);
    izwi::retain_freed_memory();
    izwi::BackendOptions backend_options;
    backend_options.threads = shared.threads.value_or(0);
    const izwi::Backend backend(backend_options);
    const std::string& model_dir = shared.model;
    const bool json = shared.json;
    if (!encode_path.empty()) return encode(backend, model_dir, encode_path, num_codebooks, codes_out_path, json);
    const at::Tensor codes = read_codes(codes_path);
    const auto codec = izwi::load_codec_decoder(model_dir, backend, false, num_codebooks);
    // Decoded and written a chunk at a time through the streaming path (exact in any chunking),
    // so memory holds one chunk of audio however many frames come in. Without --chunk-frames
    // the codes are checked whole first, as decode() checks them: an error writes no audio.
    if (chunk_frames == 0 || codes.size(1) == 0) codec->check_codes(codes);
    const int64_t chunk = chunk_frames > 0 ? chunk_frames : izwi::CodecDecoder::kDecodeChunkFrames;
    std::unique_ptr<izwi::WavWriter> wav;
    if (!out_path.empty()) {
      wav = std::make_unique<izwi::WavWriter>(out_path, codec->sample_rate(),
                                              float_wav ? izwi::WavFormat::Float32 : izwi::WavFormat::Pcm16);
    }
    // The JSON line as nlohmann writes {"sample_rate":R,"samples":[...]}, its array a chunk at a time.
    if (json) std::cout << "{\"sample_rate\":" << codec->sample_rate() << ",\"samples\":[";
    const auto start = std::chrono::steady_clock::now();
    const auto state = codec->new_state();
    int64_t samples = 0;
    for (int64_t f = 0; f < codes.size(1); f += chunk) {
      const at::Tensor piece =
          codec->decode_streaming({state.get()}, {codes.narrow(1, f, std::min(chunk, codes.size(1) - f))})[0]
              .contiguous();
      const float* data = piece.data_ptr<float>();
      if (wav) wav->write(data, static_cast<size_t>(piece.numel()));
      if (json) {
        const std::string array = nlohmann::json(std::vector<float>(data, data + piece.numel())).dump();
        std::cout << (samples > 0 ? "," : "") << array.substr(1, array.size() - 2);
      }
      samples += piece.numel();
    }
    if (wav) wav->close();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      std::cout << "]}\n";
    } else {
      const double audio_seconds = static_cast<double>(samples) / codec->sample_rate();
      std::cout << codes.size(1) << " frames -> " << samples << " samples (" << audio_seconds << " s) in " << seconds
                << " s\n";
    }
    return 0;
  });
}
