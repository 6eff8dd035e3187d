// izwi-audio-chat: speech-to-speech chat, speech recognition and text to speech with an audio
// chat model (LFM2-Audio).
//
//   izwi-audio-chat --model DIR [--audio FILE] [--system TEXT] [--prompt TEXT]
//                   [--mode interleaved|sequential] [--max-new N] [--temperature T]
//                   [--audio-temperature T] [--seed N] [--out FILE.wav] [--json]
//                   [--pre-ids 1,2,3 --post-ids 4,5,6] [--asr | --tts TEXT]
//
// Default: chat (system "Respond with interleaved text and audio.", interleaved). --asr: system
// "Perform ASR.", sequential. --tts TEXT: system "Perform TTS.", TEXT as the user's, sequential.
// --pre-ids / --post-ids are the text ids before and after the user audio, replacing the chat
// template (no tokenizer needed). Without --temperature / --audio-temperature sampling is greedy.
// --out writes the answer's speech (needs the folder's tokenizer-*.safetensors codec). With --json
// one line: {"items":[{"text":ID} or {"frame":[codes]} in generation order],"text":"...",
// "audio_seconds":x}.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

int main(int argc, char** argv) {
  CLI::App app{"Talk with an izwi audio chat model"};
  std::string model_dir, audio_path, mode, out_path, pre_ids, post_ids, tts_text;
  izwi::AudioChatRequest request;
  bool json = false, asr = false;
  float temperature = 0, audio_temperature = 0;
  uint64_t seed = 0;
  app.add_option("--model", model_dir, "Model folder (config.json, model.safetensors, tokenizer)")->required();
  app.add_option("--audio", audio_path, "The user's speech (any format and rate the audio reader takes)");
  auto* system_opt = app.add_option("--system", request.system, "System prompt");
  auto* prompt_opt = app.add_option("--prompt", request.text, "The user's text, after the audio");
  app.add_option("--mode", mode, "interleaved or sequential")->check(CLI::IsMember({"interleaved", "sequential"}));
  app.add_option("--max-new", request.max_items, "Text tokens + audio frames at most")->capture_default_str();
  auto* temperature_opt = app.add_option("--temperature", temperature, "Text sampling temperature; 0 = greedy");
  auto* audio_temperature_opt =
      app.add_option("--audio-temperature", audio_temperature, "Audio sampling temperature; 0 = greedy");
  auto* seed_opt = app.add_option("--seed", seed, "Random seed");
  app.add_option("--out", out_path, "Write the answer's speech to this WAV file");
  app.add_flag("--json", json, "Print one JSON object");
  auto* pre_opt = app.add_option("--pre-ids", pre_ids, "Text ids before the user audio (replaces the template)");
  auto* post_opt = app.add_option("--post-ids", post_ids, "Text ids after the user audio");
  auto* asr_opt = app.add_flag("--asr", asr, "Speech recognition: system \"Perform ASR.\", sequential");
  auto* tts_opt = app.add_option("--tts", tts_text, "Text to speech of TEXT: system \"Perform TTS.\", sequential");
  asr_opt->excludes(tts_opt)->excludes(system_opt);
  tts_opt->excludes(system_opt)->excludes(prompt_opt);
  pre_opt->excludes(system_opt)->excludes(prompt_opt)->excludes(asr_opt)->excludes(tts_opt);
  post_opt->excludes(system_opt)->excludes(prompt_opt)->excludes(asr_opt)->excludes(tts_opt);
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-audio-chat", [&] {
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
    if (temperature_opt->count() > 0) request.text_sampling.temperature = temperature;
    if (audio_temperature_opt->count() > 0) request.audio_sampling.temperature = audio_temperature;
    if (seed_opt->count() > 0) request.seed = seed;
    if (!audio_path.empty()) {
      const izwi::AudioBuffer audio = izwi::read_audio(audio_path);
      request.audio = izwi::to_mono(audio);
      request.sample_rate = audio.sample_rate;
    }

    izwi::Engine engine(model_dir);
    if (!out_path.empty() && engine.model_info().output_sample_rate == 0) {
      throw izwi::Error(
          izwi::ErrorCode::InvalidArgument,
          "--out needs the model folder's codec (tokenizer-*.safetensors), which " + model_dir + " does not have");
    }
    const izwi::Output out = engine.audio_chat(request);
    if (!out_path.empty()) izwi::write_wav(out_path, out.audio, out.sample_rate);
    const double audio_seconds = out.sample_rate > 0 ? static_cast<double>(out.audio.size()) / out.sample_rate : 0.0;
    if (json) {
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
