// Chat Completions with audio (docs/serving.md) driven by the official OpenAI client
// (tests/serving/chat_audio_client.mjs) over the tiny LFM2-Audio fixture with a tokenizer and a
// Mimi: the spoken answer's transcript and counts are izwi-audio-chat --json's for the same audio
// and settings (greedy), its pcm16 the Mimi decode of the CLI's frames within 1e-4 after 16-bit
// quantisation, streamed equals whole, the next turn by audio.id hits the prefix cache, audio in
// with text out is the CLI's ASR, and bad input is a 400 naming the field.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "codec/codec_decoder.h"
#include "codec/warm_codec_states.h"
#include "common/base64.h"
#include "common/cli_run.h"
#include "common/reference.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"
#include "kernels/backend.h"
#include "server/audio_answer_store.h"
#include "serving/running_server.h"

namespace izwi {
namespace {

constexpr int kItems = 40;

/// The Mimi decode of the frames among izwi-audio-chat --json's items (end-of-audio frames carry
/// no audio); empty when there are none.
std::vector<float> mimi_decode(const std::string& model_dir, const nlohmann::json& items) {
  std::vector<std::vector<int32_t>> frames;
  for (const nlohmann::json& item : items) {
    if (item.contains("frame") && item["frame"][0] != 2048) frames.push_back(item["frame"].get<std::vector<int32_t>>());
  }
  if (frames.empty()) return {};
  const auto codec = load_codec_decoder(model_dir, Backend::host(), false, 8);
  const at::Tensor decoded = codec->decode(frames_to_codes(frames, 0, frames.size())).flatten().contiguous();
  return {decoded.data_ptr<float>(), decoded.data_ptr<float>() + decoded.numel()};
}

/// pcm16 bytes as samples: integer / 32767, the inverse of the server's quantisation.
std::vector<float> pcm16_samples(const std::string& pcm) {
  std::vector<float> samples(pcm.size() / 2);
  for (size_t s = 0; s < samples.size(); ++s) {
    const auto lo = static_cast<uint16_t>(static_cast<unsigned char>(pcm[2 * s]));
    const auto hi = static_cast<uint16_t>(static_cast<unsigned char>(pcm[2 * s + 1]));
    samples[s] = static_cast<float>(static_cast<int16_t>(lo | (hi << 8)) / 32767.0);
  }
  return samples;
}

/// The largest distance of `samples` from `expected` clipped to [-1, 1], as 16-bit formats clip.
double worst_error(const std::vector<float>& samples, const std::vector<float>& expected) {
  double worst = 0;
  for (size_t s = 0; s < expected.size(); ++s) {
    worst = std::max(worst, std::abs(samples.at(s) - std::clamp(static_cast<double>(expected[s]), -1.0, 1.0)));
  }
  return worst;
}

TEST(ServerChatAudio, TheOpenAiClientGetsTheCliAnswerItsMimiDecodeAndTypedErrors) {
  testing::TempDir audio_dir, text_dir;
  testing::write_lfm2_audio_with_tokenizer(audio_dir.path(), /*codec=*/true);
  testing::write_text_model(text_dir.path());
  const std::string wav = testing::fixture_dir("lfm2-audio-tiny") + "/audio.wav";
  server::ServerOptions options;
  options.models = {{"lfm2", audio_dir.path()}, {"text", text_dir.path()}};
  options.api_key = "sk-izwi-test";
  testing::RunningServer server(options);

  const nlohmann::json got = testing::run_node_client(
      "chat_audio_client.mjs", server.url() + "/v1 sk-izwi-test lfm2 text " + wav + " " + std::to_string(kItems));

  // izwi-audio-chat's default is the same chat: the interleaved system prompt, the model's greedy sampling.
  const testing::CliRun cli =
      testing::run_example("izwi-audio-chat", "--model " + audio_dir.path() + " --audio " + wav + " --max-new " +
                                                  std::to_string(kItems) + " --json");
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  const nlohmann::json line = nlohmann::json::parse(testing::last_line(cli.out));
  int32_t frame_items = 0;
  for (const nlohmann::json& item : line.at("items")) frame_items += item.contains("frame") ? 1 : 0;
  const std::vector<float> decoded = mimi_decode(audio_dir.path(), line.at("items"));
  ASSERT_FALSE(decoded.empty());

  const nlohmann::json& whole = got["whole"];
  EXPECT_FALSE(line["text"].get<std::string>().empty());  // the stand-in tokenizer spells the text ids
  EXPECT_TRUE(whole["content"].is_null());
  EXPECT_EQ(whole["audio"]["transcript"], line["text"]);
  EXPECT_EQ(whole["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["completion_tokens"], kItems);
  EXPECT_EQ(whole["usage"]["completion_tokens_details"]["audio_tokens"], frame_items);
  EXPECT_EQ(whole["usage"]["completion_tokens_details"]["text_tokens"], kItems - frame_items);
  const std::string pcm = base64_decode(whole["audio"]["data"].get<std::string>()).value();
  ASSERT_EQ(pcm.size(), decoded.size() * 2);
  const std::vector<float> samples = pcm16_samples(pcm);
  EXPECT_LE(worst_error(samples, decoded),
            0.5 / 32767 + 1e-4);  // half a 16-bit step of rounding, and the decode's 1e-4
  // 16-bit WAV and FLAC: libsndfile reads a sample back as its integer / 32768, one more step off.
  for (const char* format : {"wav", "flac"}) {
    const std::string file = base64_decode(got["formats"][format].get<std::string>()).value();
    const AudioBuffer read = read_audio_from_memory(file.data(), file.size(), format);
    EXPECT_EQ(read.sample_rate, 24000) << format;
    ASSERT_EQ(read.samples.size(), samples.size()) << format;
    EXPECT_LE(worst_error(read.samples, decoded), 1.5 / 32767 + 1e-4) << format;
  }
  // MP3 and Ogg Opus are lossy: they decode to the answer's duration, and not to silence.
  const double seconds = static_cast<double>(decoded.size()) / 24000;
  for (const char* format : {"mp3", "opus"}) {
    const std::string file = base64_decode(got["formats"][format].get<std::string>()).value();
    const AudioBuffer read = read_audio_from_memory(file.data(), file.size(), format);
    EXPECT_NEAR(read.seconds(), seconds, 0.1) << format;
    double energy = 0;
    for (const float x : read.samples) energy += static_cast<double>(x) * x;
    EXPECT_GT(energy, 0.0) << format;
  }

  const nlohmann::json& id = whole["audio"]["id"];
  ASSERT_TRUE(id.is_string());
  EXPECT_EQ(id.get<std::string>().rfind("audio_", 0), 0u);
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_GT(whole["audio"]["expires_at"].get<int64_t>(), now);
  EXPECT_LE(whole["audio"]["expires_at"].get<int64_t>(), now + server::kAudioAnswerSeconds);

  const nlohmann::json& stream = got["stream"];
  EXPECT_EQ(stream["data"], whole["audio"]["data"]);
  EXPECT_EQ(stream["transcript"], whole["audio"]["transcript"]);
  EXPECT_NE(stream["id"], id);
  EXPECT_TRUE(stream["expires_at"].is_number_integer());
  EXPECT_EQ(stream["finish_reason"], "length");
  EXPECT_EQ(stream["usage"]["completion_tokens"], kItems);

  // 32 prompt positions and 39 fed items of the first turn: 4 blocks of 16 (as the engine's test).
  EXPECT_EQ(got["next_turn"]["usage"]["prompt_tokens_details"]["cached_tokens"], 64);
  EXPECT_EQ(got["next_turn"]["usage"]["completion_tokens"], 12);

  const testing::CliRun asr = testing::run_example(
      "izwi-audio-chat", "--model " + audio_dir.path() + " --audio " + wav + " --asr --max-new 12 --json");
  ASSERT_EQ(asr.exit_code, 0) << asr.err;
  const std::string asr_text = nlohmann::json::parse(testing::last_line(asr.out))["text"];
  EXPECT_FALSE(asr_text.empty());
  EXPECT_EQ(got["text_answer"]["content"], asr_text);
  EXPECT_TRUE(got["text_answer"]["audio"].is_null());

  EXPECT_EQ(got["text_answer_stream"]["content"], asr_text);
  // Given back as text, the answer is tokenized again: the system and user turn's 32 positions hit.
  EXPECT_EQ(got["text_turn"]["usage"]["prompt_tokens_details"]["cached_tokens"], 32);
  EXPECT_FALSE(got["pcm16"]["raw"].get<std::string>().empty());
  EXPECT_EQ(got["pcm16"]["raw"], got["pcm16"]["wav"]);

  // TTS (system "Perform TTS.", sequential): the CLI's --tts, in the default voice and in a TTS voice. (The
  // tiny model's greedy text does not reach <|audio_start|> in 24 items: both answers have no frames.)
  const testing::CliRun tts =
      testing::run_example("izwi-audio-chat", "--model " + audio_dir.path() + " --tts hi --max-new 24 --json");
  ASSERT_EQ(tts.exit_code, 0) << tts.err;
  const nlohmann::json tts_line = nlohmann::json::parse(testing::last_line(tts.out));
  EXPECT_EQ(got["tts"]["transcript"], tts_line["text"]);
  const std::vector<float> tts_expected = mimi_decode(audio_dir.path(), tts_line["items"]);
  const std::vector<float> tts_samples = pcm16_samples(base64_decode(got["tts"]["data"].get<std::string>()).value());
  ASSERT_EQ(tts_samples.size(), tts_expected.size());
  EXPECT_LE(worst_error(tts_samples, tts_expected), 0.5 / 32767 + 1e-4);
  EXPECT_TRUE(got["tts_voice"]["transcript"].is_string());

  const std::vector<std::pair<const char*, const char*>> errors = {
      {"bad_base64", "messages[1].content[0].input_audio.data"},
      {"unreadable", "messages[1].content[0].input_audio.data"},
      {"odd_pcm16", "messages[1].content[0].input_audio.data"},
      {"voice", "audio.voice"},
      {"voice_in_chat", "audio.voice"},
      {"format", "audio.format"},
      {"stream_format", "audio.format"},
      {"unknown_id", "messages[2].audio.id"},
      {"text_model_audio_in", "messages[1].content[0]"},
      {"text_model_audio_out", "modalities"},
  };
  for (const auto& [name, param] : errors) {
    EXPECT_EQ(got[name]["status"], 400) << name << ": " << got[name];
    EXPECT_EQ(got[name]["param"], param) << name << ": " << got[name];
    EXPECT_EQ(got[name]["message"].get<std::string>().find(audio_dir.path()), std::string::npos) << name;
  }
}

TEST(AudioAnswerStore, KeepsTheLatestAnswersUntilTheirExpiry) {
  server::AudioAnswerStore store(2, 10);
  const AudioChatMessage message{"assistant", {AudioChatPart{"", {5}, {}, 0, {{1, 2, 3, 4, 5, 6, 7, 8}}}}};
  const std::string a = server::AudioAnswerStore::new_id(), b = server::AudioAnswerStore::new_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(store.add(a, "lfm2", message, 100)->expires_at, 110);
  store.add(b, "lfm2", message, 105);
  ASSERT_NE(store.find(a, 109), nullptr);
  EXPECT_EQ(store.find(a, 109)->message.parts[0].frames, message.parts[0].frames);
  EXPECT_EQ(store.find(a, 110), nullptr);  // expires_at is the first second it is gone
  EXPECT_NE(store.find(b, 110), nullptr);
  // A third answer past max_answers drops the oldest.
  store.add(server::AudioAnswerStore::new_id(), "lfm2", message, 106);
  EXPECT_EQ(store.find(a, 106), nullptr);
  EXPECT_NE(store.find(b, 106), nullptr);
  EXPECT_EQ(store.find("audio_unknown", 106), nullptr);
}

}  // namespace
}  // namespace izwi
