#pragma once
// The one reader of a model folder's sampling defaults (generation_config.json): each output head's
// default SamplingParams, read as the model family's released code reads the file.

#include <string>

#include "izwi/sampling.h"

namespace izwi {

/// How a family reads generation_config.json.
enum class GenerationDefaultsRule {
  /// Text models, as Hugging Face's generate: do_sample true samples with the file's temperature
  /// (1 when absent), top_k, top_p and repetition_penalty; do_sample false or absent is greedy
  /// (temperature 0) with the file's repetition_penalty. Keys the file omits stay unset (off).
  HfGenerate,
  /// Qwen3-TTS, as its released code: the main head from do_sample, temperature, top_k, top_p,
  /// repetition_penalty; the per-frame head from subtalker_dosample, subtalker_temperature,
  /// subtalker_top_k, subtalker_top_p. Each key the file omits (or a missing file) takes the
  /// released default: sampling on, temperature 0.9, top_k 50, top_p 1, penalty 1.05 (main only).
  Qwen3Tts,
  /// LFM2-Audio, as liquid-audio: its generate reads no file; both heads are greedy.
  Lfm2Audio,
};

/// Default sampling of a model's main head and of its per-frame head (speech models' other codebooks).
struct GenerationDefaults {
  SamplingParams sampling;
  SamplingParams codebook_sampling;
};

/// Reads `<model_dir>/generation_config.json` (when the rule reads one and it exists). InvalidFormat
/// naming the file and the field for a value of the wrong type or out of range.
GenerationDefaults read_generation_defaults(const std::string& model_dir, GenerationDefaultsRule rule);

}  // namespace izwi
