#pragma once
// config.json contents of real model shapes (and small ones), for writing random-weight
// checkpoints that benchmarks can load without a download.

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace izwi {

/// The config.json for `preset` of `arch` (llama, qwen3, lfm2). InvalidArgument naming the
/// available presets when the pair is unknown.
nlohmann::json checkpoint_preset(const std::string& arch, const std::string& preset);

/// Every (arch, preset) pair checkpoint_preset accepts.
std::vector<std::pair<std::string, std::string>> checkpoint_presets();

}  // namespace izwi
