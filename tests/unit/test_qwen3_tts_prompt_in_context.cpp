// The in-context cloning prompt of Qwen3-TTS Base, position by position as the released
// generate() + generate_icl_prompt() lay it out (full and streaming text), its prefix keys, and
// the reference checks.

#include <gtest/gtest.h>

#include "common/error_message.h"
#include "models/qwen3_tts/qwen3_tts_prompt.h"

namespace izwi {
namespace {

// Small stand-in ids: text vocabulary 100, codec vocabulary 300 with 2 codebooks of 50 codes.
Qwen3TtsConfig config() {
  Qwen3TtsConfig c;
  c.tts_model_type = "base";
  c.talker.vocab_size = 300;
  c.code_predictor.vocab_size = 50;
  c.num_code_groups = 2;
  c.text_vocab_size = 100;
  c.codec_pad = 200, c.codec_bos = 201, c.codec_eos = 202, c.codec_think = 203, c.codec_nothink = 204,
  c.codec_think_bos = 205, c.codec_think_eos = 206;
  c.im_start = 90, c.im_end = 91, c.tts_pad = 92, c.tts_bos = 93, c.tts_eos = 94;
  c.languages = {{"english", 210}};
  return c;
}

constexpr int32_t kS = 90, kE = 91, kA = 80, kN = 81;  // im_start, im_end, "assistant", newline

TtsPromptInputs inputs(bool streaming, size_t reference_frames) {
  TtsPromptInputs in;
  in.text_ids = {kS, kA, kN, 10, 11, 12, kE, kN, kS, kA, kN};  // text 10 11 12
  in.language = "english";
  in.xvector = {0.5f, -0.5f};
  in.reference_text_ids = {kS, kA, kN, 20, 21, kE, kN};  // transcript 20 21
  for (size_t f = 0; f < reference_frames; ++f) in.reference_codes.push_back({static_cast<int32_t>(f), 40});
  in.streaming_text = streaming;
  return in;
}

struct Pos {
  int32_t text, codec, vector, frame;
};

std::vector<Pos> positions(const TtsPrompt& p) {
  std::vector<Pos> out;
  for (const TtsPosition& q : p.positions) out.push_back({q.text, q.codec, q.vector, q.frame});
  return out;
}

bool operator==(const Pos& a, const Pos& b) {
  return a.text == b.text && a.codec == b.codec && a.vector == b.vector && a.frame == b.frame;
}

void PrintTo(const Pos& p, std::ostream* os) {
  *os << "{" << p.text << "," << p.codec << "," << p.vector << "," << p.frame << "}";
}

// Role, then the codec prefix with the language and the x-vector, pad over tts_bos (bos held back).
const std::vector<Pos> kHead = {{kS, -1, -1, -1},  {kA, -1, -1, -1},  {kN, -1, -1, -1},
                                {92, 203, -1, -1}, {92, 205, -1, -1}, {92, 210, -1, -1},
                                {92, 206, -1, -1}, {92, -1, 0, -1},   {93, 200, -1, -1}};

std::vector<Pos> with_head(std::vector<Pos> tail) {
  std::vector<Pos> all = kHead;
  all.insert(all.end(), tail.begin(), tail.end());
  return all;
}

TEST(Qwen3TtsInContextPrompt, FullTextPutsTheWholeTextStreamBeforeTheReferenceFrames) {
  const TtsPrompt p = build_tts_prompt(config(), inputs(false, 3));
  // Transcript then text then tts_eos, each over codec_pad; codec_bos and the frames over tts_pad.
  EXPECT_EQ(positions(p), with_head({{20, 200, -1, -1},
                                     {21, 200, -1, -1},
                                     {10, 200, -1, -1},
                                     {11, 200, -1, -1},
                                     {12, 200, -1, -1},
                                     {94, 200, -1, -1},
                                     {92, 201, -1, -1},
                                     {92, -1, -1, 0},
                                     {92, -1, -1, 1},
                                     {92, -1, -1, 2}}));
  EXPECT_TRUE(p.trailing_text.empty());
  EXPECT_EQ(p.reference_frames.size(), 3u);
  EXPECT_EQ(p.vectors, (std::vector<std::vector<float>>{{0.5f, -0.5f}}));
}

TEST(Qwen3TtsInContextPrompt, StreamingTextLongerThanTheReferenceFeedsItsRestPerFrame) {
  const TtsPrompt p = build_tts_prompt(config(), inputs(true, 2));
  // Codec stream: bos, frame 0, frame 1 (3 positions) under the text stream's first three ids.
  EXPECT_EQ(positions(p), with_head({{20, 201, -1, -1}, {21, -1, -1, 0}, {10, -1, -1, 1}}));
  EXPECT_EQ(p.trailing_text, (std::vector<int32_t>{11, 12, 94}));
}

TEST(Qwen3TtsInContextPrompt, StreamingTextShorterThanTheReferenceIsPaddedWithTtsPad) {
  const TtsPrompt p = build_tts_prompt(config(), inputs(true, 7));
  EXPECT_EQ(positions(p), with_head({{20, 201, -1, -1},
                                     {21, -1, -1, 0},
                                     {10, -1, -1, 1},
                                     {11, -1, -1, 2},
                                     {12, -1, -1, 3},
                                     {94, -1, -1, 4},
                                     {92, -1, -1, 5},
                                     {92, -1, -1, 6}}));
  EXPECT_TRUE(p.trailing_text.empty());
}

TEST(Qwen3TtsInContextPrompt, KeysAreSharedByEqualInputsOnly) {
  const Qwen3TtsConfig c = config();
  EmbeddingKeys registry(tts_first_vector_key(c.text_vocab_size, c.talker.vocab_size));
  TtsPromptInputs first = inputs(false, 3), other_text = first, other_reference = first;
  other_text.text_ids[4] = 13;
  other_reference.reference_codes[1][1] = 41;
  const std::vector<int32_t> a = tts_prompt_keys(build_tts_prompt(c, first), c.talker.vocab_size, registry);
  const std::vector<int32_t> b = tts_prompt_keys(build_tts_prompt(c, other_text), c.talker.vocab_size, registry);
  const std::vector<int32_t> r = tts_prompt_keys(build_tts_prompt(c, other_reference), c.talker.vocab_size, registry);
  ASSERT_EQ(a.size(), b.size());
  // Another text: the same keys but at the changed text position.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i] == b[i], i != kHead.size() + 3) << i;
  // Another reference: the keys part where the frame differs (frames keep their text).
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i] == r[i], i != a.size() - 2) << i;
  // Voice keys sit above every id-built key; the same inputs again give the same keys.
  const int64_t first_voice_key = tts_first_vector_key(c.text_vocab_size, c.talker.vocab_size);
  EXPECT_GE(a[kHead.size() - 2], first_voice_key);
  EXPECT_GE(a.back(), first_voice_key);
  EXPECT_LT(a[kHead.size()], first_voice_key);
  EXPECT_EQ(tts_prompt_keys(build_tts_prompt(c, first), c.talker.vocab_size, registry), a);
}

TEST(Qwen3TtsInContextPrompt, ReferencesThatDoNotFitAreNamed) {
  const Qwen3TtsConfig c = config();
  const auto error_of = [&](const TtsPromptInputs& in) {
    return testing::error_message([&] { build_tts_prompt(c, in); });
  };
  TtsPromptInputs in = inputs(false, 2);
  in.xvector.clear();
  EXPECT_NE(error_of(in).find("needs its x-vector"), std::string::npos);
  in = inputs(false, 2);
  in.reference_text_ids = {kS, kA, kN, kE, kN};
  EXPECT_NE(error_of(in).find("reference transcript is empty"), std::string::npos);
  in = inputs(false, 2);
  in.reference_codes.clear();
  EXPECT_NE(error_of(in).find("no reference codes"), std::string::npos);
  in = inputs(false, 2);
  in.reference_codes[1] = {1, 2, 3};
  EXPECT_NE(error_of(in).find("reference_codes[1] has 3 codes; this model's frames have 2"), std::string::npos);
  in = inputs(false, 2);
  in.reference_codes[0][1] = 50;
  EXPECT_NE(error_of(in).find("reference_codes[0][1] = 50 is outside [0, 50)"), std::string::npos);
  in = inputs(false, 2);
  in.reference_text_ids[3] = 100;
  EXPECT_NE(error_of(in).find("reference_text_ids[3] = 100 is outside the text vocabulary"), std::string::npos);
}

}  // namespace
}  // namespace izwi
