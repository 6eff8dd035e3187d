#pragma once
// The talker prompt of Qwen3-TTS, as the released generate() assembles it: dual-track positions
// whose input is the text-track embedding (text_projection of a text id) plus the codec-track
// embedding (a codec id, or a vector such as a cloned voice's x-vector), and the text fed one
// position per generated frame afterwards. Plain ids and vectors, no tensors: the model embeds them.

#include <cstdint>
#include <string>
#include <vector>

#include "models/qwen3_tts/qwen3_tts_config.h"

namespace izwi {

/// One prompt position: -1 marks a track that is absent (adds nothing). The codec track is a
/// codec id or a row of TtsPrompt::vectors, not both.
struct TtsPosition {
  int32_t text = -1;
  int32_t codec = -1;
  int32_t vector = -1;
};

/// A codec-track input given as values (the x-vector in the speaker slot), and the key that stands
/// for it in the prefix tree (distinct from every key of an id-built position).
struct TtsVector {
  std::vector<float> values;
  int32_t key = -1;
};

struct TtsPrompt {
  std::vector<TtsPosition> positions;
  std::vector<TtsVector> vectors;
  /// Text ids added to the inputs of generated frames 0, 1, ...; tts_pad once they run out.
  std::vector<int32_t> trailing_text;
};

struct TtsPromptInputs {
  std::vector<int32_t> text_ids;      ///< `<|im_start|>assistant\n` text `<|im_end|>\n<|im_start|>assistant\n`
  std::vector<int32_t> instruct_ids;  ///< `<|im_start|>user\n` instruction `<|im_end|>\n`, or empty
  std::string speaker;                ///< lower case; empty = no named speaker
  TtsVector xvector;                  ///< a cloned voice for the speaker slot (values empty = none)
  std::string language;               ///< lower case; "auto" or a key of codec_language_id
  bool streaming_text = false;        ///< text fed per frame (true) or all in the prompt (false)
};

/// Builds the prompt; throws InvalidArgument naming an unknown speaker or language (listing the
/// valid ones), a speaker given with an x-vector, empty text, or ids outside the text vocabulary.
TtsPrompt build_tts_prompt(const Qwen3TtsConfig& config, const TtsPromptInputs& inputs);

/// The keys of the prompt's positions for the scheduler and the prefix tree: distinct positions
/// get distinct keys, so equal prompt prefixes share KV and nothing else does.
std::vector<int32_t> tts_prompt_keys(const TtsPrompt& prompt, int64_t codec_vocab_size);

/// One past the largest key of a position built from ids: keys of vector positions start here.
int64_t tts_first_vector_key(int64_t text_vocab_size, int64_t codec_vocab_size);

}  // namespace izwi
