#include "models/qwen3_tts/qwen3_tts_prompt.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "common/check.h"

namespace izwi {

namespace {

std::vector<std::string> keys_of(const std::map<std::string, int32_t>& map) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : map) keys.push_back(key);
  return keys;
}

void check_text_ids(const Qwen3TtsConfig& c, const std::vector<int32_t>& ids, const char* field) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= c.text_vocab_size) {
      fail(ErrorCode::InvalidArgument, "{}[{}] = {} is outside the text vocabulary [0, {})", field, i, ids[i],
           c.text_vocab_size);
    }
  }
}

// The reference transcript's ids are `<|im_start|>assistant\n` (3), the transcript, then
// `<|im_end|>\n` (2).
constexpr size_t kReferenceRole = 3, kReferenceClosing = 2;

void check_reference(const Qwen3TtsConfig& c, const TtsPromptInputs& in) {
  if (in.reference_codes.empty() && in.reference_text_ids.empty()) return;
  if (in.xvector.empty()) fail(ErrorCode::InvalidArgument, "an in-context voice needs its x-vector");
  if (in.reference_text_ids.size() < kReferenceRole + kReferenceClosing + 1) {
    fail(ErrorCode::InvalidArgument,
         "the voice's reference transcript is empty: reference_text_ids has {} ids, the framing alone takes {}",
         in.reference_text_ids.size(), kReferenceRole + kReferenceClosing);
  }
  if (in.reference_codes.empty()) fail(ErrorCode::InvalidArgument, "the voice has a transcript but no reference codes");
  check_text_ids(c, in.reference_text_ids, "voice reference_text_ids");
  const int64_t codebook_size = c.code_predictor.vocab_size;
  for (size_t f = 0; f < in.reference_codes.size(); ++f) {
    const std::vector<int32_t>& frame = in.reference_codes[f];
    if (frame.size() != static_cast<size_t>(c.num_code_groups)) {
      fail(ErrorCode::InvalidArgument, "voice reference_codes[{}] has {} codes; this model's frames have {}", f,
           frame.size(), c.num_code_groups);
    }
    for (size_t k = 0; k < frame.size(); ++k) {
      if (frame[k] < 0 || frame[k] >= codebook_size) {
        fail(ErrorCode::InvalidArgument, "voice reference_codes[{}][{}] = {} is outside [0, {})", f, k, frame[k],
             codebook_size);
      }
    }
  }
}

// In-context cloning, as the released generate_icl_prompt: the text stream is the reference
// transcript then the text then tts_eos; the codec stream is codec_bos then one position per
// reference frame. Full text mode: every text position over codec_pad, then the codec stream over
// tts_pad. Streaming mode: the two streams position by position, the shorter padded with tts_pad
// (codec side) or the longer text's rest fed per generated frame.
void add_in_context(const Qwen3TtsConfig& c, const TtsPromptInputs& in, const std::vector<int32_t>& text,
                    TtsPrompt& prompt) {
  std::vector<int32_t> stream(in.reference_text_ids.begin() + kReferenceRole,
                              in.reference_text_ids.end() - kReferenceClosing);
  stream.insert(stream.end(), text.begin(), text.end());
  stream.push_back(c.tts_eos);
  prompt.reference_frames = in.reference_codes;
  std::vector<TtsPosition> codec{{-1, c.codec_bos}};
  for (size_t f = 0; f < in.reference_codes.size(); ++f) codec.push_back({-1, -1, -1, static_cast<int32_t>(f)});
  std::vector<TtsPosition>& p = prompt.positions;
  if (!in.streaming_text) {
    for (int32_t id : stream) p.push_back({id, c.codec_pad});
    for (TtsPosition position : codec) {
      position.text = c.tts_pad;
      p.push_back(position);
    }
    return;
  }
  for (size_t i = 0; i < codec.size(); ++i) {
    TtsPosition position = codec[i];
    position.text = i < stream.size() ? stream[i] : c.tts_pad;
    p.push_back(position);
  }
  if (stream.size() > codec.size()) prompt.trailing_text.assign(stream.begin() + codec.size(), stream.end());
}

}  // namespace

TtsPrompt build_tts_prompt(const Qwen3TtsConfig& c, const TtsPromptInputs& in) {
  // The text ids are `<|im_start|>assistant\n` (3), the text, then 5 closing ids.
  constexpr size_t kRole = 3, kClosing = 5;
  if (in.text_ids.size() < kRole + kClosing + 1) {
    fail(ErrorCode::InvalidArgument, "text is empty: text_ids has {} ids, the chat framing alone takes {}",
         in.text_ids.size(), kRole + kClosing);
  }
  check_text_ids(c, in.text_ids, "text_ids");
  check_text_ids(c, in.instruct_ids, "instruct_ids");
  check_reference(c, in);

  int32_t language = -1;  // "auto": no language id
  if (in.language != "auto") {
    auto it = c.languages.find(in.language);
    if (it == c.languages.end()) {
      fail(ErrorCode::InvalidArgument, "language '{}' is not supported (auto, {})", in.language,
           fmt::join(keys_of(c.languages), ", "));
    }
    language = it->second;
  }
  int32_t speaker = -1;
  if (!in.speaker.empty() && !in.xvector.empty()) {
    fail(ErrorCode::InvalidArgument, "give a speaker or a voice, not both (speaker '{}')", in.speaker);
  }
  if (!in.speaker.empty()) {
    auto it = c.speakers.find(in.speaker);
    if (it == c.speakers.end()) {
      fail(ErrorCode::InvalidArgument, "speaker '{}' is not supported ({})", in.speaker,
           c.speakers.empty() ? std::string("this model has no named speakers")
                              : fmt::format("{}", fmt::join(keys_of(c.speakers), ", ")));
    }
    speaker = it->second;
    // A dialect speaker speaks its dialect where the language is Chinese or left to the model.
    auto dialect = c.speaker_dialects.find(in.speaker);
    if (dialect != c.speaker_dialects.end() && (in.language == "chinese" || in.language == "auto")) {
      language = c.languages.at(dialect->second);
    }
  }

  TtsPrompt prompt;
  std::vector<TtsPosition>& p = prompt.positions;
  for (int32_t id : in.instruct_ids) p.push_back({id, -1});
  for (size_t i = 0; i < kRole; ++i) p.push_back({in.text_ids[i], -1});
  // Codec prefix: think tags with the language (or nothink), the speaker (a named one's codec id
  // or a voice's x-vector), then pad; its bos is held back for the first text position. The text
  // track is tts_pad, then tts_bos on the last.
  std::vector<TtsPosition> codec;
  const auto add_codec = [&](int32_t id) { codec.push_back({c.tts_pad, id}); };
  if (language < 0) {
    for (int32_t id : {c.codec_nothink, c.codec_think_bos, c.codec_think_eos}) add_codec(id);
  } else {
    for (int32_t id : {c.codec_think, c.codec_think_bos, language, c.codec_think_eos}) add_codec(id);
  }
  if (speaker >= 0) add_codec(speaker);
  if (!in.xvector.empty()) {
    codec.push_back({c.tts_pad, -1, static_cast<int32_t>(prompt.vectors.size())});
    prompt.vectors.push_back(in.xvector);
  }
  add_codec(c.codec_pad);
  codec.back().text = c.tts_bos;
  p.insert(p.end(), codec.begin(), codec.end());

  const auto text_begin = in.text_ids.begin() + kRole, text_end = in.text_ids.end() - kClosing;
  if (!in.reference_codes.empty()) {
    add_in_context(c, in, {text_begin, text_end}, prompt);
  } else if (in.streaming_text) {
    p.push_back({*text_begin, c.codec_bos});
    prompt.trailing_text.assign(text_begin + 1, text_end);
    prompt.trailing_text.push_back(c.tts_eos);
  } else {
    for (auto it = text_begin; it != text_end; ++it) p.push_back({*it, c.codec_pad});
    p.push_back({c.tts_eos, c.codec_pad});
    p.push_back({c.tts_pad, c.codec_bos});
  }
  return prompt;
}

std::vector<int32_t> tts_prompt_keys(const TtsPrompt& prompt, int64_t codec_vocab_size, EmbeddingKeys& registry) {
  std::vector<int32_t> keys;
  for (const TtsPosition& position : prompt.positions) {
    if (position.vector >= 0) {
      // A vector position's text track is tts_pad by construction: its vector's key says it all.
      keys.push_back(registry.key_of(prompt.vectors[static_cast<size_t>(position.vector)]));
      continue;
    }
    if (position.frame >= 0) {
      keys.push_back(
          registry.key_of_frame(prompt.reference_frames[static_cast<size_t>(position.frame)], position.text));
      continue;
    }
    // (text + 1) * (codec_vocab + 1) + (codec + 1): at most ~4.7e8 for the released vocabularies.
    const int64_t key = static_cast<int64_t>(position.text + 1) * (codec_vocab_size + 1) + (position.codec + 1);
    IZWI_CHECK(key <= std::numeric_limits<int32_t>::max(), "prompt position key {} overflows", key);
    keys.push_back(static_cast<int32_t>(key));
  }
  return keys;
}

int64_t tts_first_vector_key(int64_t text_vocab_size, int64_t codec_vocab_size) {
  return (text_vocab_size + 1) * (codec_vocab_size + 1);
}

}  // namespace izwi
