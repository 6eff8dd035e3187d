#pragma once
// config.json contents of real model shapes (and small ones), for writing random-weight
// checkpoints that benchmarks can load without a download.

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace izwi {

/// Key of a preset holding the config.json of a subfolder `speech_tokenizer/` (qwen3_tts); it is
/// not part of the model's own config.json.
inline constexpr const char* kSpeechTokenizerKey = "speech_tokenizer";

/// The config.json for `preset` of `arch` (llama, qwen3, lfm2, voxtral_realtime, qwen3_tts). InvalidArgument naming the
/// available presets when the pair is unknown.
nlohmann::json checkpoint_preset(const std::string& arch, const std::string& preset);

/// Every (arch, preset) pair checkpoint_preset accepts.
std::vector<std::pair<std::string, std::string>> checkpoint_presets();

}  // namespace izwi
