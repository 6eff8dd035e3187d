#pragma once
// The talker prompt of Qwen3-TTS, as the released generate() assembles it: dual-track positions
// whose input is the text-track embedding (text_projection of a text id) plus the codec-track
// embedding (a codec id, a vector such as a cloned voice's x-vector, or a frame of reference codes
// whose codebook embeddings sum), and the text fed one position per generated frame afterwards.
// Plain ids and vectors, no tensors: the model embeds them.

#include <cstdint>
#include <string>
#include <vector>

#include "models/embedding_keys.h"
#include "models/qwen3_tts/qwen3_tts_config.h"

namespace izwi {

/// One prompt position: -1 marks a track that is absent (adds nothing). The codec track is one of
/// a codec id, a row of TtsPrompt::vectors or a row of TtsPrompt::reference_frames.
struct TtsPosition {
  int32_t text = -1;
  int32_t codec = -1;
  int32_t vector = -1;
  int32_t frame = -1;
};

struct TtsPrompt {
  std::vector<TtsPosition> positions;
  std::vector<std::vector<float>> vectors;
  std::vector<std::vector<int32_t>> reference_frames;  ///< In-context cloning: [frames][codebooks]
  /// Text ids added to the inputs of generated frames 0, 1, ...; tts_pad once they run out.
  std::vector<int32_t> trailing_text;
};

struct TtsPromptInputs {
  std::vector<int32_t> text_ids;      ///< `<|im_start|>assistant\n` text `<|im_end|>\n<|im_start|>assistant\n`
  std::vector<int32_t> instruct_ids;  ///< `<|im_start|>user\n` instruction `<|im_end|>\n`, or empty
  std::string speaker;                ///< lower case; empty = no named speaker
  std::vector<float> xvector;         ///< a cloned voice for the speaker slot (empty = none)
  /// In-context cloning: `<|im_start|>assistant\n` transcript `<|im_end|>\n` and its audio's frames.
  std::vector<int32_t> reference_text_ids;
  std::vector<std::vector<int32_t>> reference_codes;
  std::string language;         ///< lower case; "auto" or a key of codec_language_id
  bool streaming_text = false;  ///< text fed per frame (true) or all in the prompt (false)
};

/// Builds the prompt; throws InvalidArgument naming an unknown speaker or language (listing the
/// valid ones), a speaker given with an x-vector, a reference without an x-vector, empty text or
/// reference transcript, ids outside the text vocabulary, or reference codes that do not fit.
TtsPrompt build_tts_prompt(const Qwen3TtsConfig& config, const TtsPromptInputs& inputs);

/// The keys of the prompt's positions for the scheduler and the prefix tree: positions with
/// distinct inputs get distinct keys, so equal prompt prefixes share KV and nothing else does.
/// Positions built from ids get arithmetic keys; the others get `keys`' registry keys.
std::vector<int32_t> tts_prompt_keys(const TtsPrompt& prompt, int64_t codec_vocab_size, EmbeddingKeys& keys);

/// One past the largest key of a position built from ids: keys of vector positions start here.
int64_t tts_first_vector_key(int64_t text_vocab_size, int64_t codec_vocab_size);

}  // namespace izwi
