#include "io/generation_defaults.h"

#include <filesystem>

#include "common/json_fields.h"
#include "io/hf_config.h"

namespace izwi {

namespace {

// Temperatures and penalties beyond this only flatten or zero the distribution (released: 0.6 to 1.2).
constexpr double kMaxSamplingScale = 100;

// One head's keys (`prefix` + temperature, top_k, top_p; repetition_penalty when `penalty_key`),
// range-checked against the file so that a bad default names it.
struct HeadKeys {
  std::optional<bool> do_sample;
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> repetition_penalty;
};

HeadKeys read_head(const JsonFields& f, const std::string& do_sample_key, const std::string& prefix, bool penalty_key) {
  HeadKeys k;
  k.do_sample = f.get_optional<bool>(do_sample_key);
  k.temperature = f.get_optional<float>(prefix + "temperature");
  k.top_k = f.get_optional<int32_t>(prefix + "top_k");
  k.top_p = f.get_optional<float>(prefix + "top_p");
  if (penalty_key) k.repetition_penalty = f.get_optional<float>("repetition_penalty");
  const std::string top_k = prefix + "top_k", top_p = prefix + "top_p", temperature = prefix + "temperature";
  if (k.top_k) require_in_range(f.origin(), {{top_k.c_str(), *k.top_k, 0, kMaxVocabSize}});
  if (k.top_p) require_real_in_range(f.origin(), {{top_p.c_str(), *k.top_p, 0, 1, true}});
  if (k.temperature) require_real_in_range(f.origin(), {{temperature.c_str(), *k.temperature, 0, kMaxSamplingScale}});
  if (k.repetition_penalty) {
    require_real_in_range(f.origin(), {{"repetition_penalty", *k.repetition_penalty, 0, kMaxSamplingScale, true}});
  }
  return k;
}

SamplingParams hf_generate(const HeadKeys& k) {
  SamplingParams s;
  s.repetition_penalty = k.repetition_penalty;  // HF applies the penalty in greedy search too
  if (!k.do_sample.value_or(false)) {
    s.temperature = 0.0f;
    return s;
  }
  s.temperature = k.temperature.value_or(1.0f);
  s.top_k = k.top_k;
  s.top_p = k.top_p;
  return s;
}

// The released Qwen3-TTS code: its hard defaults under each key the file omits.
SamplingParams qwen3_tts(const HeadKeys& k, bool main_head) {
  SamplingParams s;
  s.temperature = k.do_sample.value_or(true) ? k.temperature.value_or(0.9f) : 0.0f;
  s.top_k = k.top_k.value_or(50);
  s.top_p = k.top_p.value_or(1.0f);
  if (main_head) s.repetition_penalty = k.repetition_penalty.value_or(1.05f);
  return s;
}

}  // namespace

GenerationDefaults read_generation_defaults(const std::string& model_dir, GenerationDefaultsRule rule) {
  GenerationDefaults d;
  if (rule == GenerationDefaultsRule::Lfm2Audio) return d;  // unset: greedy
  const std::string path = (std::filesystem::path(model_dir) / "generation_config.json").string();
  const bool exists = !model_dir.empty() && std::filesystem::exists(path);
  const nlohmann::json doc = exists ? read_json_file(path) : nlohmann::json::object();
  const JsonFields f(doc, path);
  if (rule == GenerationDefaultsRule::HfGenerate) {
    d.sampling = hf_generate(read_head(f, "do_sample", "", true));
  } else {
    d.sampling = qwen3_tts(read_head(f, "do_sample", "", true), true);
    d.codebook_sampling = qwen3_tts(read_head(f, "subtalker_dosample", "subtalker_", false), false);
  }
  return d;
}

}  // namespace izwi
