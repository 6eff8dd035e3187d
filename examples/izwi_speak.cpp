// izwi-speak: text to speech with a speech synthesis model (Qwen3-TTS).
//
//   izwi-speak --model DIR (--text S | --text-ids 1,2,3) [--speaker NAME | --voice-audio FILE
//              [--voice-text S | --voice-text-ids 1,2,3] | --voice-file F] [--save-voice F] [--language L]
//              [--instruct S] [--text-mode streaming|full] [--subtalker-temperature T]
//              [--out FILE.wav [--float]] [--stream] [shared options: --help]
//
// --voice-audio clones the voice of a reference recording (Qwen3-TTS Base: its x-vector); with
// what the recording says (--voice-text, or --voice-text-ids: the framed ids
// `<|im_start|>assistant\n` + transcript + `<|im_end|>\n`) the clone is in-context: the speech
// continues the reference, whose codes the speech tokenizer's encoder computes.
// --save-voice writes that voice to a small file, which --voice-file reuses without the audio.
// --text-ids are the complete talker text ids (`<|im_start|>assistant\n` + text +
// `<|im_end|>\n<|im_start|>assistant\n`). --temperature sets both heads unless
// --subtalker-temperature is given; 0 is greedy; unset sampling flags take the model's defaults.
// --max-tokens (or --max-frames) caps the audio frames; the KV pool holds this one request
// unless --kv-blocks or --config sets it. On a terminal (without --json) bars show the voice's
// creation and the audio spoken so far. --out writes 16-bit PCM (32-bit float with
// --float). --stream plays the streaming path: the WAV is
// written chunk by chunk as frames are decoded, and first_audio_ms is the latency of the first
// chunk. With --json one line: {"codes":[[...] per frame],"frames":N,"sample_rate":24000,
// "audio_seconds":x,"rtf":y,"first_audio_ms":z}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/progress_bar.h"
#include "common/shared_options.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The KV positions `r` may fill (its text, instruction, in-context voice prompt and frames at
/// most), for a KV pool of this one request; `reference_seconds` of audio whose voice is yet to be
/// created with `transcript` (0 for none).
int64_t speech_positions(const izwi::SpeechRequest& r, const izwi::VoiceTranscript& transcript,
                         double reference_seconds) {
  int64_t n =
      r.params.max_frames + izwi::cli::kTemplatePositions +
      (r.text_ids.empty() ? izwi::cli::text_positions(r.text) : static_cast<int64_t>(r.text_ids.size())) +
      (r.instruct_ids.empty() ? izwi::cli::text_positions(r.instruct) : static_cast<int64_t>(r.instruct_ids.size()));
  // An in-context voice continues its reference: the reference's codes and transcript come first.
  n += static_cast<int64_t>(r.voice.reference_codes.size() + r.voice.reference_text_ids.size());
  if (!transcript.text.empty() || !transcript.text_ids.empty()) {
    n += izwi::cli::audio_positions(reference_seconds) + (transcript.text_ids.empty()
                                                              ? izwi::cli::text_positions(transcript.text)
                                                              : static_cast<int64_t>(transcript.text_ids.size()));
  }
  return n;
}

/// Library names in this tool's errors and the flags that set them.
const izwi::cli::FlagNames kFlagNames = {{"transcript_ids", "--voice-text-ids"},
                                         {"transcript needs a tokenizer", "--voice-text needs a tokenizer"},
                                         {"text_ids", "--text-ids"},
                                         {"params.max_frames", "--max-tokens"},
                                         {"SpeechParams.codebook_sampling.temperature", "--subtalker-temperature"}};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Speak text with an izwi speech model"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kEngineTool, "Model folder (config.json, model.safetensors, speech_tokenizer/)", "",
       "Audio frames at most, 80 ms each (default: 2048)", "--max-frames",
       "Sampling temperature of both heads unless --subtalker-temperature; 0 = greedy (default: the model's)"});
  std::string text_ids, text_mode, out_path, voice_audio, voice_file, save_voice, voice_text_ids;
  izwi::VoiceTranscript transcript;
  bool stream = false, float_wav = false;
  izwi::SpeechRequest request;
  izwi::SpeechParams& p = request.params;
  float subtalker_temperature = 0;
  auto* text_opt = app.add_option("--text", request.text, "Text to speak (needs the folder's tokenizer)");
  auto* ids_opt = app.add_option("--text-ids", text_ids, "Complete talker text ids, comma separated");
  text_opt->excludes(ids_opt);
  auto* speaker_opt = app.add_option("--speaker", request.speaker, "Speaker name (CustomVoice models)");
  auto* voice_audio_opt =
      app.add_option("--voice-audio", voice_audio, "Reference recording of the voice to clone (Base models)");
  auto* voice_file_opt = app.add_option("--voice-file", voice_file, "Voice file written by --save-voice");
  auto* voice_text_opt = app.add_option("--voice-text", transcript.text, "What --voice-audio says (in-context clone)")
                             ->needs(voice_audio_opt);
  auto* voice_ids_opt =
      app.add_option("--voice-text-ids", voice_text_ids, "Framed transcript ids of --voice-audio, comma separated")
          ->needs(voice_audio_opt);
  voice_text_opt->excludes(voice_ids_opt);
  app.add_option("--save-voice", save_voice, "Write the voice of --voice-audio to this file");
  speaker_opt->excludes(voice_audio_opt)->excludes(voice_file_opt);
  voice_audio_opt->excludes(voice_file_opt);
  app.add_option("--language", request.language, "Language, or auto")->capture_default_str();
  app.add_option("--instruct", request.instruct, "Voice or style instruction (VoiceDesign, CustomVoice 1.7B)");
  app.add_option("--text-mode", text_mode, "streaming (text fed per frame) or full (text first)")
      ->check(CLI::IsMember({"streaming", "full"}));
  auto* sub_opt = app.add_option("--subtalker-temperature", subtalker_temperature, "Temperature of codebooks 1..");
  auto* out_opt = app.add_option("--out", out_path, "Write the audio to this WAV file (16-bit)");
  app.add_flag("--float", float_wav, "With --out: 32-bit float samples instead of 16-bit")->needs(out_opt);
  app.add_flag("--stream", stream, "Stream: write the WAV chunk by chunk as audio is decoded");
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-speak", kFlagNames, [&] {
    if (ids_opt->count() > 0) request.text_ids = izwi::cli::parse_id_list(text_ids, "--text-ids");
    if (voice_ids_opt->count() > 0) transcript.text_ids = izwi::cli::parse_id_list(voice_text_ids, "--voice-text-ids");
    if (text_opt->count() == 0 && ids_opt->count() == 0) {
      throw izwi::Error(izwi::ErrorCode::InvalidArgument, "give --text or --text-ids");
    }
    if (!text_mode.empty()) {
      request.text_mode = text_mode == "streaming" ? izwi::SpeechTextMode::Streaming : izwi::SpeechTextMode::Full;
    }
    if (shared.max_tokens) p.max_frames = *shared.max_tokens;
    p.sampling = shared.sampling();
    p.codebook_sampling.temperature = shared.temperature;
    if (sub_opt->count() > 0) p.codebook_sampling.temperature = subtalker_temperature;
    p.seed = shared.seed;

    if (!save_voice.empty() && voice_audio.empty()) {
      throw izwi::Error(izwi::ErrorCode::InvalidArgument, "--save-voice needs --voice-audio");
    }
    if (!voice_file.empty()) request.voice = izwi::load_voice(voice_file);

    std::vector<float> reference;
    int32_t reference_rate = 0;
    if (!voice_audio.empty()) {
      const izwi::AudioBuffer audio = izwi::read_audio(voice_audio);
      reference = izwi::to_mono(audio);
      reference_rate = audio.sample_rate;
    }
    const double reference_seconds = reference.empty() ? 0.0 : static_cast<double>(reference.size()) / reference_rate;

    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, {speech_positions(request, transcript, reference_seconds)}),
        izwi::cli::ModelUse::Speech);
    izwi::Engine& e = *engine;
    const bool show_progress = izwi::cli::ProgressBar::wanted(shared.json);
    if (!voice_audio.empty()) {
      // One call: the bar says what runs and ends when it is done.
      izwi::cli::ProgressBar bar("creating the voice of " + voice_audio, show_progress, "s", 1.0 / reference_rate);
      const auto samples_in = static_cast<int64_t>(reference.size());
      bar.update(0, samples_in);
      request.voice = e.create_voice(reference, reference_rate, transcript);
      bar.update(samples_in, samples_in);
      if (!save_voice.empty()) izwi::save_voice(request.voice, save_voice);
    }
    const int32_t rate = e.model_info().output_sample_rate;
    std::unique_ptr<izwi::WavWriter> wav;
    if (!out_path.empty()) {
      wav = std::make_unique<izwi::WavWriter>(out_path, rate,
                                              float_wav ? izwi::WavFormat::Float32 : izwi::WavFormat::Pcm16);
    }
    const Clock::time_point start = Clock::now();
    std::optional<double> first_audio_ms;
    std::vector<std::vector<int32_t>> codes;
    size_t samples = 0;
    {
      // Read as a stream either way, for the progress counter: synthesize() decodes the same
      // chunks (SpeechRequest::chunk_frames) and only holds them back until the end.
      izwi::cli::ProgressBar bar("speaking", show_progress, "s of audio", 0.08);
      std::vector<float> audio;
      izwi::StreamHandle handle = e.synthesize_streaming(request);
      while (std::optional<izwi::StreamChunk> chunk = handle.next()) {
        if (chunk->finish_reason == izwi::FinishReason::Error) throw izwi::Error(chunk->error_code, chunk->error);
        if (stream && !chunk->audio.empty() && !first_audio_ms) first_audio_ms = ms_since(start);
        if (stream && wav) wav->write(chunk->audio.data(), chunk->audio.size());
        if (!stream) audio.insert(audio.end(), chunk->audio.begin(), chunk->audio.end());
        samples += chunk->audio.size();
        codes.insert(codes.end(), chunk->audio_codes.begin(), chunk->audio_codes.end());
        bar.count(static_cast<int64_t>(codes.size()));
      }
      bar.finish();
      if (!stream) {
        first_audio_ms = ms_since(start);  // the whole audio arrives at once
        if (wav) wav->write(audio.data(), audio.size());
      }
    }
    if (wav) wav->close();
    const double seconds = ms_since(start) / 1000.0;
    const double audio_seconds = static_cast<double>(samples) / rate;
    if (shared.json) {
      nlohmann::json line = {{"codes", codes},
                             {"frames", codes.size()},
                             {"sample_rate", rate},
                             {"audio_seconds", audio_seconds},
                             {"rtf", audio_seconds > 0 ? seconds / audio_seconds : 0.0},
                             {"first_audio_ms", first_audio_ms.value_or(0.0)}};
      std::cout << line.dump() << "\n";
    } else {
      std::cout << codes.size() << " frames, " << audio_seconds << " s of audio in " << seconds << " s"
                << (out_path.empty() ? "" : " -> " + out_path) << "\n";
    }
    return 0;
  });
}
