#pragma once
// A Qwen3-TTS Base checkpoint for tests, assembled from two fixtures: the qwen3-tts-tiny talker
// and codec with the qwen3-tts-speaker-encoder-tiny encoder, whose x-vector (64 wide) is as wide
// as that talker. Two shards and an index, as real Base checkpoints may come. The talker keeps its
// codec embedding, so the x-vector of a named speaker is its row there (alice: 3000).

#include <string>
#include <vector>

#include "common/temp_dir.h"

namespace izwi::testing {

/// Writes the model into `dir` (config.json with tts_model_type base, speaker_encoder_config, no
/// named speakers) and returns the folder. With `codec_encoder` its speech_tokenizer/ is the
/// released nested layout with an encoder: the tiny decoder, and a Mimi encoder (mimi-tiny's
/// architecture with the talker's 16 codebooks of 2048 codes) of seeded random weights.
std::string make_qwen3_tts_base_model(const TempDir& dir, bool codec_encoder = false);

/// Row `id` of the qwen3-tts-tiny talker's codec embedding (the codec-track input of that id).
std::vector<float> qwen3_tts_tiny_codec_embedding(int id);

}  // namespace izwi::testing
