// Audio chat through the whole engine (fixture lfm2-audio-tiny): the released code's items for
// both generation modes from the fixture's WAV, streamed chunks equal to the whole answer, audio
// chat and plain text requests batched together, the answer's frames decoded by the folder's
// Mimi, and bad input.

#include <gtest/gtest.h>

#include <future>

#include "codec/codec_decoder.h"
#include "codec/warm_codec_states.h"
#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

using testing::fixture_dir;
using testing::ReferenceTensors;

constexpr const char* kFixture = "lfm2-audio-tiny";

/// The fixture's prompt at token level: the text ids before and after the user audio.
AudioChatRequest reference_request(AudioChatMode mode, int32_t items) {
  const ReferenceTensors ref(kFixture);
  const std::vector<int32_t> ids = ref.ids("text_ids");
  AudioChatRequest r;
  r.pre_ids.assign(ids.begin(), ids.begin() + 9);  // modality_flags: 9 text, 18 audio, 5 text
  r.post_ids.assign(ids.begin() + 9, ids.end());
  const AudioBuffer wav = read_audio(fixture_dir(kFixture) + "/audio.wav");
  r.audio = wav.samples;
  r.sample_rate = wav.sample_rate;
  r.mode = mode;
  r.max_items = items;
  return r;
}

/// The fixture's prompt through the chat template: its system prompt, then the user's audio.
AudioChatRequest template_request(AudioChatMode mode, int32_t items) {
  AudioChatRequest r = reference_request(mode, items);
  r.pre_ids.clear();
  r.post_ids.clear();
  r.system = testing::kLfm2AudioSystem;
  return r;
}

void expect_reference_items(const Output& out, const std::string& mode) {
  const ReferenceTensors ref(kFixture);
  const std::vector<int32_t> kinds = ref.ids(mode + ".kinds"), text = ref.ids(mode + ".text");
  const at::Tensor frames = ref.get(mode + ".frames");
  ASSERT_EQ(out.item_is_frame.size(), kinds.size()) << mode;
  ASSERT_EQ(out.tokens.size(), kinds.size()) << mode;
  size_t frame = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    ASSERT_EQ(out.item_is_frame[i], kinds[i] == 1) << mode << " item " << i;
    if (!out.item_is_frame[i]) {
      EXPECT_EQ(out.tokens[i], text[i]) << mode << " item " << i;
      continue;
    }
    const std::vector<int32_t>& codes = out.audio_codes.at(frame++);
    EXPECT_EQ(out.tokens[i], codes[0]);
    for (int64_t k = 0; k < 8; ++k) {
      EXPECT_EQ(codes[static_cast<size_t>(k)], frames[static_cast<int64_t>(i)][k].item<int64_t>())
          << mode << " item " << i << " codebook " << k;
    }
  }
  EXPECT_EQ(frame, out.audio_codes.size());
}

TEST(EngineAudioChat, BothModesGiveTheReleasedItemsFromTheWav) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  EXPECT_TRUE(engine.model_info().audio_chat);
  const Output interleaved = engine.audio_chat(reference_request(AudioChatMode::Interleaved, 40));
  EXPECT_EQ(interleaved.finish_reason, FinishReason::Length);
  expect_reference_items(interleaved, "interleaved");
  EXPECT_TRUE(interleaved.audio.empty());  // the tiny folder has no codec
  expect_reference_items(engine.audio_chat(reference_request(AudioChatMode::Sequential, 12)), "sequential");
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineAudioChat, StreamedChunksAddUpToTheWholeAnswer) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  StreamHandle stream = engine.audio_chat_streaming(reference_request(AudioChatMode::Interleaved, 40));
  Output joined;
  while (std::optional<StreamChunk> chunk = stream.next()) {
    ASSERT_EQ(chunk->item_is_frame.size(), chunk->tokens.size());
    joined.tokens.insert(joined.tokens.end(), chunk->tokens.begin(), chunk->tokens.end());
    joined.item_is_frame.insert(joined.item_is_frame.end(), chunk->item_is_frame.begin(), chunk->item_is_frame.end());
    joined.audio_codes.insert(joined.audio_codes.end(), chunk->audio_codes.begin(), chunk->audio_codes.end());
  }
  expect_reference_items(joined, "interleaved");
}

TEST(EngineAudioChat, ChatAsrAndTextRequestsRunTogether) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  GenerationParams text_params;
  text_params.max_tokens = 16;
  Request text;
  text.prompt_ids = {1, 6, 300, 301, 7, 10};
  text.params = text_params;
  const Output text_alone = engine.generate(text);
  std::vector<std::future<Output>> chats;
  for (int i = 0; i < 3; ++i) {
    chats.push_back(std::async(std::launch::async, [&, i] {
      return engine.audio_chat(
          reference_request(i == 1 ? AudioChatMode::Sequential : AudioChatMode::Interleaved, i == 1 ? 12 : 40));
    }));
  }
  std::vector<std::future<Output>> texts;
  for (int i = 0; i < 2; ++i) texts.push_back(std::async(std::launch::async, [&] { return engine.generate(text); }));
  // And an LFM2 text engine in the same process at the same time.
  Engine lfm2(fixture_dir("lfm2-tiny"), testing::test_engine_config());
  const Output lfm2_alone = lfm2.generate(text);
  std::future<Output> lfm2_text = std::async(std::launch::async, [&] { return lfm2.generate(text); });
  for (int i = 0; i < 3; ++i)
    expect_reference_items(chats[static_cast<size_t>(i)].get(), i == 1 ? "sequential" : "interleaved");
  for (auto& t : texts) EXPECT_EQ(t.get().tokens, text_alone.tokens);
  EXPECT_EQ(lfm2_text.get().tokens, lfm2_alone.tokens);
  EXPECT_EQ(testing::check_idle(engine), "");
  EXPECT_EQ(testing::check_idle(lfm2), "");
}

TEST(EngineAudioChat, TheFoldersMimiDecodesTheAnswersFrames) {
  // The model folder with a moshi Mimi beside it (Kyutai's sizes, random weights): the answer's
  // frames, end-of-audio ones excepted, come out as PCM, streamed or whole.
  testing::TempDir dir;
  testing::write_lfm2_audio_with_tokenizer(dir.path(), /*codec=*/true);
  Engine engine(dir.path(), testing::test_engine_config());
  EXPECT_EQ(engine.model_info().output_sample_rate, 24000);
  const Output whole = engine.audio_chat(reference_request(AudioChatMode::Interleaved, 40));
  expect_reference_items(whole, "interleaved");
  std::vector<std::vector<int32_t>> frames;
  for (const auto& f : whole.audio_codes) {
    if (f[0] != 2048) frames.push_back(f);
  }
  ASSERT_EQ(whole.audio.size(), frames.size() * 1920);
  const auto codec = load_codec_decoder(dir.path(), Backend::host(), false, 8);
  const at::Tensor expected = codec->decode(frames_to_codes(frames, 0, frames.size()));
  EXPECT_LT(testing::max_abs_diff(at::tensor(whole.audio), expected), 1e-4);
  AudioChatRequest chunked = reference_request(AudioChatMode::Interleaved, 40);
  chunked.chunk_frames = 5;
  StreamHandle stream = engine.audio_chat_streaming(chunked);
  std::vector<float> streamed;
  while (std::optional<StreamChunk> chunk = stream.next()) {
    streamed.insert(streamed.end(), chunk->audio.begin(), chunk->audio.end());
  }
  EXPECT_LT(testing::max_abs_diff(at::tensor(streamed), expected), 1e-4);
}

/// The next turn of the conversation `first` began and `answer` replied to, at token level: the
/// whole first turn and the answer (its text ids and frames in order, unframed) as history, then
/// the user's next turn (the same audio again, between stand-in framing ids).
AudioChatRequest second_turn(const AudioChatRequest& first, const Output& answer) {
  AudioChatRequest r;
  AudioChatMessage prompt;
  prompt.parts.resize(3);
  prompt.parts[0].text_ids = first.pre_ids;
  prompt.parts[1].audio = first.audio;
  prompt.parts[1].sample_rate = first.sample_rate;
  prompt.parts[2].text_ids = first.post_ids;
  AudioChatMessage reply = assistant_message(answer);
  reply.role.clear();
  r.history = {prompt, reply};
  r.pre_ids = {7, 10, 6, 302, 10};  // <|im_end|> \n <|im_start|> user \n
  r.audio = first.audio;
  r.sample_rate = first.sample_rate;
  r.post_ids = first.post_ids;
  r.mode = AudioChatMode::Interleaved;
  r.max_items = 12;
  return r;
}

TEST(EngineAudioChat, ASecondTurnReusesTheFirstFromThePrefixCache) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  const AudioChatRequest first = reference_request(AudioChatMode::Interleaved, 40);
  const Output answer = engine.audio_chat(first);
  const AudioChatRequest second = second_turn(first, answer);
  const Output warm = engine.audio_chat(second);
  // The first turn computed its 32 prompt positions and 39 of its 40 items (the last was sampled,
  // never fed): 4 whole blocks of 16, conv state restored at the last.
  EXPECT_EQ(warm.prefix_cache_hit_tokens, 64);
  Engine cold_engine(fixture_dir(kFixture));
  const Output cold = cold_engine.audio_chat(second);
  EXPECT_EQ(cold.prefix_cache_hit_tokens, 0);
  ASSERT_EQ(warm.tokens.size(), 12u);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.item_is_frame, cold.item_is_frame);
  EXPECT_EQ(warm.audio_codes, cold.audio_codes);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineAudioChat, TheChatTemplateBuildsTheReleasedPrompt) {
  // liquid-audio's ChatState pieces, each tokenized on its own, give the fixture's prompt ids, so
  // the answers are the released ones.
  testing::TempDir dir;
  testing::write_lfm2_audio_with_tokenizer(dir.path());
  Engine engine(dir.path(), testing::test_engine_config());
  expect_reference_items(engine.audio_chat(template_request(AudioChatMode::Interleaved, 40)), "interleaved");
  expect_reference_items(engine.audio_chat(template_request(AudioChatMode::Sequential, 12)), "sequential");
}

TEST(EngineAudioChat, ATemplateConversationsSecondTurnHitsThePrefixCache) {
  testing::TempDir dir;
  testing::write_lfm2_audio_with_tokenizer(dir.path());
  Engine engine(dir.path(), testing::test_engine_config());
  const AudioChatRequest first = template_request(AudioChatMode::Interleaved, 40);
  const Output answer = engine.audio_chat(first);
  AudioChatRequest second = template_request(AudioChatMode::Interleaved, 12);
  AudioChatMessage user{"user", {AudioChatPart{}}};
  user.parts[0].audio = first.audio;
  user.parts[0].sample_rate = first.sample_rate;
  second.history = {user, assistant_message(answer)};
  const Output warm = engine.audio_chat(second);
  EXPECT_EQ(warm.prefix_cache_hit_tokens, 64);  // 32 prompt positions + 39 fed items: 4 blocks
  Engine cold_engine(dir.path());
  const Output cold = cold_engine.audio_chat(second);
  EXPECT_EQ(cold.prefix_cache_hit_tokens, 0);
  ASSERT_EQ(warm.tokens.size(), 12u);
  EXPECT_EQ(warm.tokens, cold.tokens);
  EXPECT_EQ(warm.item_is_frame, cold.item_is_frame);
  EXPECT_EQ(warm.audio_codes, cold.audio_codes);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineAudioChat, BadRequestsAreNamed) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  AudioChatRequest both = reference_request(AudioChatMode::Interleaved, 4);
  both.system = "Perform ASR.";
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(both); }).find("give the prompt one way"),
            std::string::npos);
  AudioChatRequest templated;
  templated.system = "Perform ASR.";
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(templated); }).find("pass pre_ids and post_ids"),
            std::string::npos);
  AudioChatRequest bad_rate = reference_request(AudioChatMode::Interleaved, 4);
  bad_rate.sample_rate = 0;
  EXPECT_EQ(testing::error_code_of([&] { engine.audio_chat(bad_rate); }), ErrorCode::InvalidArgument);
  AudioChatRequest big_id = reference_request(AudioChatMode::Interleaved, 4);
  big_id.post_ids[0] = 100000;
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(big_id); }).find("text id 100000"), std::string::npos);
  AudioChatRequest mixed = reference_request(AudioChatMode::Interleaved, 4);
  mixed.history.push_back({"", {AudioChatPart{"", {1, 2}, {}, 0, {{1, 2, 3, 4, 5, 6, 7, 8}}}}});
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(mixed); }).find("history[0].parts[0] must hold one of"),
            std::string::npos);
  AudioChatRequest role = reference_request(AudioChatMode::Interleaved, 4);
  role.history.push_back({"robot", {AudioChatPart{"", {1}, {}, 0, {}}}});
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(role); }).find("history[0].role = 'robot'"),
            std::string::npos);
  AudioChatRequest untokenized = reference_request(AudioChatMode::Interleaved, 4);
  untokenized.history.push_back({"user", {AudioChatPart{"hello", {}, {}, 0, {}}}});
  EXPECT_NE(testing::error_message([&] { engine.audio_chat(untokenized); }).find("needs the model folder's tokenizer"),
            std::string::npos);
  AudioChatRequest hot = reference_request(AudioChatMode::Interleaved, 4);
  hot.audio_sampling.temperature = -1.0f;
  EXPECT_NE(
      testing::error_message([&] { engine.audio_chat(hot); }).find("AudioChatRequest.audio_sampling.temperature = -1"),
      std::string::npos);
  Engine text(fixture_dir("qwen3-tiny"));
  EXPECT_EQ(testing::error_code_of([&] { text.audio_chat(reference_request(AudioChatMode::Interleaved, 4)); }),
            ErrorCode::Unsupported);
  EXPECT_EQ(testing::check_idle(engine), "");
}

}  // namespace
}  // namespace izwi
