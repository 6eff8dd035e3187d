// izwi-audio-chat: speech-to-speech chat, speech recognition and text to speech with an audio
// chat model (LFM2-Audio).
//
//   izwi-audio-chat --model DIR [--audio FILE] [--system TEXT] [--prompt TEXT]
//                   [--mode interleaved|sequential] [--audio-temperature T] [--out FILE.wav [--float]]
//                   [--pre-ids 1,2,3 --post-ids 4,5,6] [--asr | --tts TEXT] [shared options: --help]
//
// Default: chat (system "Respond with interleaved text and audio.", interleaved). --asr: system
// "Perform ASR.", sequential. --tts TEXT: system "Perform TTS.", TEXT as the user's, sequential.
// --pre-ids / --post-ids are the text ids before and after the user audio, replacing the chat
// template (no tokenizer needed). Without --temperature / --audio-temperature sampling takes the
// model's defaults (greedy). --max-tokens (or --max-new) caps text tokens + audio frames; the KV
// pool holds this one request unless --kv-blocks or --config sets it. --out
// writes the answer's speech as 16-bit PCM (32-bit float with --float) (needs the folder's tokenizer-*.safetensors
// codec). With --json one line: {"items":[{"text":ID} or {"frame":[codes]} in generation order],"text":"...",
// "audio_seconds":x}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/shared_options.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

namespace {

/// Library names in this tool's errors and the flags that set them.
const izwi::cli::FlagNames kFlagNames = {{"max_items", "--max-tokens"},
                                         {"pre_ids", "--pre-ids"},
                                         {"post_ids", "--post-ids"},
                                         {"AudioChatRequest.audio_sampling.temperature", "--audio-temperature"}};

/// The KV positions `r` may fill (its prompt, audio and items at most), for a KV pool of this one
/// request.
int64_t audio_chat_positions(const izwi::AudioChatRequest& r) {
  const double seconds = r.sample_rate > 0 ? static_cast<double>(r.audio.size()) / r.sample_rate : 0.0;
  return izwi::cli::audio_positions(seconds) + izwi::cli::kTemplatePositions + izwi::cli::text_positions(r.system) +
         izwi::cli::text_positions(r.text) + static_cast<int64_t>(r.pre_ids.size() + r.post_ids.size()) + r.max_items;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Talk with an izwi audio chat model"};
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(app, shared,
                                {izwi::cli::kEngineTool, "Model folder (config.json, model.safetensors, tokenizer)", "",
                                 "Text tokens + audio frames at most (default: 512)", "--max-new",
                                 "Text sampling temperature; 0 = greedy (default: the model's)"});
  std::string audio_path, mode, out_path, pre_ids, post_ids, tts_text;
  izwi::AudioChatRequest request;
  bool asr = false, float_wav = false;
  float audio_temperature = 0;
  app.add_option("--audio", audio_path, "The user's speech (any format and rate the audio reader takes)");
  auto* system_opt = app.add_option("--system", request.system, "System prompt");
  auto* prompt_opt = app.add_option("--prompt", request.text, "The user's text, after the audio");
  app.add_option("--mode", mode, "interleaved or sequential")->check(CLI::IsMember({"interleaved", "sequential"}));
  auto* audio_temperature_opt =
      app.add_option("--audio-temperature", audio_temperature, "Audio sampling temperature; 0 = greedy");
  auto* out_opt = app.add_option("--out", out_path, "Write the answer's speech to this WAV file (16-bit)");
  app.add_flag("--float", float_wav, "With --out: 32-bit float samples instead of 16-bit")->needs(out_opt);
  auto* pre_opt = app.add_option("--pre-ids", pre_ids, "Text ids before the user audio (replaces the template)");
  auto* post_opt = app.add_option("--post-ids", post_ids, "Text ids after the user audio");
  auto* asr_opt = app.add_flag("--asr", asr, "Speech recognition: system \"Perform ASR.\", sequential");
  auto* tts_opt = app.add_option("--tts", tts_text, "Text to speech of TEXT: system \"Perform TTS.\", sequential");
  asr_opt->excludes(tts_opt)->excludes(system_opt);
  tts_opt->excludes(system_opt)->excludes(prompt_opt);
  pre_opt->excludes(system_opt)->excludes(prompt_opt)->excludes(asr_opt)->excludes(tts_opt);
  post_opt->excludes(system_opt)->excludes(prompt_opt)->excludes(asr_opt)->excludes(tts_opt);
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-audio-chat", kFlagNames, [&] {
    const bool token_level = pre_opt->count() > 0 || post_opt->count() > 0;
    if (pre_opt->count() > 0) request.pre_ids = izwi::cli::parse_id_list(pre_ids, "--pre-ids");
    if (post_opt->count() > 0) request.post_ids = izwi::cli::parse_id_list(post_ids, "--post-ids");
    if (asr) {
      request.system = "Perform ASR.";
    } else if (tts_opt->count() > 0) {
      request.system = "Perform TTS.";
      request.text = tts_text;
    } else if (!token_level && system_opt->count() == 0) {
      request.system = "Respond with interleaved text and audio.";
    }
    const bool sequential = mode.empty() ? asr || tts_opt->count() > 0 : mode == "sequential";
    request.mode = sequential ? izwi::AudioChatMode::Sequential : izwi::AudioChatMode::Interleaved;
    if (shared.max_tokens) request.max_items = *shared.max_tokens;
    request.text_sampling = shared.sampling();
    if (audio_temperature_opt->count() > 0) request.audio_sampling.temperature = audio_temperature;
    request.seed = shared.seed;
    if (!audio_path.empty()) {
      const izwi::AudioBuffer audio = izwi::read_audio(audio_path);
      request.audio = izwi::to_mono(audio);
      request.sample_rate = audio.sample_rate;
    }

    const auto engine = izwi::cli::load_engine(
        shared, izwi::cli::engine_config(shared, {audio_chat_positions(request)}), izwi::cli::ModelUse::AudioChat);
    if (!out_path.empty() && engine->model_info().output_sample_rate == 0) {
      throw izwi::Error(
          izwi::ErrorCode::InvalidArgument,
          "--out needs the model folder's codec (tokenizer-*.safetensors), which " + shared.model + " does not have");
    }
    const izwi::Output out = engine->audio_chat(request);
    if (!out_path.empty()) {
      izwi::write_wav(out_path, out.audio, out.sample_rate,
                      float_wav ? izwi::WavFormat::Float32 : izwi::WavFormat::Pcm16);
    }
    const double audio_seconds = out.sample_rate > 0 ? static_cast<double>(out.audio.size()) / out.sample_rate : 0.0;
    if (shared.json) {
      nlohmann::json items = nlohmann::json::array();
      size_t frame = 0;
      for (size_t i = 0; i < out.tokens.size(); ++i) {
        if (out.item_is_frame[i]) {
          items.push_back({{"frame", out.audio_codes[frame++]}});
        } else {
          items.push_back({{"text", out.tokens[i]}});
        }
      }
      std::cout << nlohmann::json{{"items", items}, {"text", out.text}, {"audio_seconds", audio_seconds}}.dump()
                << "\n";
    } else {
      std::cout << out.text << "\n"
                << out.audio_codes.size() << " frames (" << audio_seconds << " s of audio), finish "
                << izwi::to_string(out.finish_reason) << "\n";
    }
    return 0;
  });
}
