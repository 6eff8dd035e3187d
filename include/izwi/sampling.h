#pragma once
/// @file sampling.h
/// How one output head draws its next id: the one sampling type of every request (text,
/// transcription, each head of speech synthesis and audio chat).

#include <cstdint>
#include <optional>

namespace izwi {

/// Sampling controls of one output head, applied in Hugging Face's order: repetition penalty,
/// temperature, top-k, top-p, then a draw. Every field is optional: an unset field takes the
/// model's default for that head (ModelInfo::default_sampling / default_codebook_sampling, read
/// from the model folder's generation_config.json), and a field the model has no default for is
/// off. Invalid values (NaN, out of range) are rejected with InvalidArgument naming the field.
struct SamplingParams {
  /// Softmax temperature, finite and >= 0; 0 = greedy (argmax). top_k = 1 is greedy too.
  std::optional<float> temperature;
  /// Keep the k most likely ids, >= 0; 0 = off.
  std::optional<int32_t> top_k;
  /// Nucleus sampling: keep the most likely ids whose probability mass reaches top_p, in (0, 1];
  /// 1 = off.
  std::optional<float> top_p;
  /// Finite and > 0; > 1 discourages ids the head has already produced (text: prompt and output;
  /// speech: the generated frames' codebook-0 ids); 1 = off.
  std::optional<float> repetition_penalty;
};

}  // namespace izwi
