// Voxtral Realtime through the engine (fixture voxtral-realtime-tiny): raw audio in, greedy
// tokens out, identical to transformers offline and streamed in chunks of any size, with many
// concurrent streams batched together, and bad audio rejected before it reaches the step loop.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

constexpr int32_t kRate = 16000;
constexpr int32_t kPadId = 32;  // the fixture's stand-in for the streaming pad token

class EngineTranscription : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing::fixture_dir("voxtral-realtime-tiny");
    audio_ = new std::vector<float>(load_audio_mono(dir + "/audio.wav", kRate));
    expected_ = new std::vector<int32_t>(testing::ReferenceTensors("voxtral-realtime-tiny").ids("generated"));
  }
  static void TearDownTestSuite() {
    delete audio_;
    delete expected_;
  }

  static TranscriptionOptions options() {
    TranscriptionOptions o;
    o.pad_token_id = kPadId;
    o.delay_tokens = 6;
    return o;
  }

  /// Pushes the fixture audio in chunks of `chunk` samples, then reads the stream to its end.
  static std::vector<int32_t> stream_in_chunks(Engine& engine, size_t chunk, StreamChunk* last = nullptr) {
    TranscriptionStream stream = engine.start_transcription(options());
    for (size_t pos = 0; pos < audio_->size(); pos += chunk) {
      stream.push_audio(audio_->data() + pos, std::min(chunk, audio_->size() - pos), kRate);
    }
    stream.finish_audio();
    std::vector<int32_t> tokens;
    while (std::optional<StreamChunk> piece = stream.next()) {
      tokens.insert(tokens.end(), piece->tokens.begin(), piece->tokens.end());
      if (piece->finished && last != nullptr) *last = *piece;
    }
    return tokens;
  }

  Engine engine_{testing::fixture_dir("voxtral-realtime-tiny"), testing::test_engine_config()};
  static std::vector<float>* audio_;
  static std::vector<int32_t>* expected_;
};

std::vector<float>* EngineTranscription::audio_ = nullptr;
std::vector<int32_t>* EngineTranscription::expected_ = nullptr;

TEST_F(EngineTranscription, WholeFileMatchesReference) {
  const Output out = engine_.transcribe(*audio_, kRate, options());
  EXPECT_EQ(out.tokens, *expected_);
  EXPECT_EQ(out.finish_reason, FinishReason::Length);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, StreamedChunksMatchOffline) {
  for (size_t chunk : {size_t{1280}, size_t{592}, size_t{16000}}) {  // 80 ms, 37 ms, 1 s
    StreamChunk last;
    EXPECT_EQ(stream_in_chunks(engine_, chunk, &last), *expected_) << "chunk " << chunk;
    EXPECT_EQ(last.finish_reason, FinishReason::Length);
  }
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, EightConcurrentStreamsAllMatch) {
  const std::vector<size_t> chunks = {1280, 592, 16000, 160, 3000, 1, 4096, 777};
  std::vector<std::vector<int32_t>> results(chunks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < chunks.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = stream_in_chunks(engine_, chunks[i]); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < chunks.size(); ++i) EXPECT_EQ(results[i], *expected_) << "chunk " << chunks[i];
  // Batched: far fewer steps than the 8 x 22 tokens sampled.
  EXPECT_LT(engine_.metrics().steps, chunks.size() * expected_->size() / 2) << "the streams should share steps";
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, AudioEndingAfterDecodingCaughtUpAddsNoToken) {
  // All audio arrives, decoding catches up with it (sampling at the last audio position), and only
  // then does the end of the audio come: the transcription must still be the offline one.
  TranscriptionStream stream = engine_.start_transcription(options());
  stream.push_audio(audio_->data(), audio_->size(), kRate);
  std::vector<int32_t> tokens;
  while (tokens.size() < expected_->size()) {
    std::optional<StreamChunk> piece = stream.next();
    ASSERT_TRUE(piece.has_value());
    ASSERT_FALSE(piece->finished);
    tokens.insert(tokens.end(), piece->tokens.begin(), piece->tokens.end());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the engine sample whatever it can
  stream.finish_audio();
  StreamChunk last;
  while (std::optional<StreamChunk> piece = stream.next()) {
    tokens.insert(tokens.end(), piece->tokens.begin(), piece->tokens.end());
    last = *piece;
  }
  EXPECT_EQ(tokens, *expected_);
  EXPECT_EQ(last.finish_reason, FinishReason::Length);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, StreamWithoutAudioDoesNotBlockOthers) {
  TranscriptionStream waiting = engine_.start_transcription(options());
  EXPECT_EQ(stream_in_chunks(engine_, 1280), *expected_);
  // The silent stream is still live; now its audio comes.
  waiting.push_audio(audio_->data(), audio_->size(), kRate);
  waiting.finish_audio();
  std::vector<int32_t> tokens;
  while (std::optional<StreamChunk> piece = waiting.next())
    tokens.insert(tokens.end(), piece->tokens.begin(), piece->tokens.end());
  EXPECT_EQ(tokens, *expected_);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, TextRequestsRunAlongsideStreams) {
  Request text;
  text.prompt_ids = {1, 40, 41, 42};
  text.params.max_tokens = 40;
  text.params.min_tokens = 40;
  const std::vector<int32_t> alone = engine_.generate(text).tokens;
  StreamHandle running = engine_.generate_streaming(text);
  EXPECT_EQ(stream_in_chunks(engine_, 1280), *expected_);
  EXPECT_EQ(testing::drain(running), alone);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, OtherSampleRatesAreResampled) {
  const std::vector<float> audio_44k = resample(*audio_, kRate, 44100);
  const Output out = engine_.transcribe(audio_44k, 44100, options());
  // Resampling twice changes the samples slightly: the length is fixed, the tokens need not be.
  EXPECT_EQ(out.tokens.size(), expected_->size());
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, ContinueAfterAudioDecodesPastTheEnd) {
  TranscriptionOptions o = options();
  o.continue_after_audio = true;
  o.max_tokens_after_audio = 5;
  const Output out = engine_.transcribe(*audio_, kRate, o);
  ASSERT_GE(out.tokens.size(), expected_->size());
  EXPECT_LE(out.tokens.size(), expected_->size() + 5);
  EXPECT_EQ(std::vector<int32_t>(out.tokens.begin(), out.tokens.begin() + expected_->size()), *expected_);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, AbortMidStreamFreesEverything) {
  TranscriptionStream stream = engine_.start_transcription(options());
  stream.push_audio(audio_->data(), audio_->size() / 2, kRate);
  std::optional<StreamChunk> first = stream.next();  // something was decoded
  ASSERT_TRUE(first.has_value());
  stream.abort();
  StreamChunk last;
  while (std::optional<StreamChunk> piece = stream.next()) last = *piece;
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

TEST_F(EngineTranscription, BadAudioIsRejectedOnTheCallersThread) {
  TranscriptionStream stream = engine_.start_transcription(options());
  const float nan_chunk[3] = {0.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  EXPECT_EQ(testing::error_code_of([&] { stream.push_audio(nan_chunk, 3, kRate); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { stream.push_audio(audio_->data(), 10, 0); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { stream.push_audio(nullptr, 10, kRate); }), ErrorCode::InvalidArgument);
  stream.push_audio(audio_->data(), 100, kRate);
  EXPECT_EQ(testing::error_code_of([&] { stream.push_audio(audio_->data(), 10, 8000); }), ErrorCode::InvalidArgument);
  stream.finish_audio();
  EXPECT_EQ(testing::error_code_of([&] { stream.push_audio(audio_->data(), 10, kRate); }), ErrorCode::InvalidArgument);
  // 100 samples cannot make one log-mel frame: the stream ends with an error, not a hang.
  StreamChunk last;
  while (std::optional<StreamChunk> piece = stream.next()) last = *piece;
  EXPECT_EQ(last.finish_reason, FinishReason::Error);
  EXPECT_EQ(last.error_code, ErrorCode::InvalidArgument);
  EXPECT_NE(last.error.find("needs more than"), std::string::npos) << last.error;
  EXPECT_EQ(testing::error_code_of([&] { engine_.transcribe({}, kRate, options()); }), ErrorCode::InvalidArgument);
  TranscriptionOptions bad_pad = options();
  bad_pad.pad_token_id = engine_.model_info().vocab_size;
  EXPECT_EQ(testing::error_code_of([&] { engine_.start_transcription(bad_pad); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::check_idle(engine_), "");
}

// The fixture model with a tekken.json whose special tokens put [STREAMING_PAD] at id 32, as in
// Mistral's vocabulary, followed by the 256 single bytes: the pad id and the text come from it.
TEST(EngineTranscriptionWithTokenizer, PadIdAndTextComeFromTheTokenizer) {
  testing::TempDir dir;
  const std::string fixture = testing::fixture_dir("voxtral-realtime-tiny");
  testing::write_voxtral_with_tokenizer(dir.path());
  static_assert(testing::kStreamingPadId == kPadId);

  Engine engine(dir.path(), testing::test_engine_config());
  ASSERT_NE(engine.tokenizer(), nullptr);
  TranscriptionOptions options;  // no pad_token_id: the tokenizer's [STREAMING_PAD]
  const std::vector<float> audio = load_audio_mono(fixture + "/audio.wav", kRate);
  const Output out = engine.transcribe(audio, kRate, options);
  EXPECT_EQ(out.tokens, testing::ReferenceTensors("voxtral-realtime-tiny").ids("generated"));
  std::vector<int32_t> in_vocab;  // the model's 512 ids outrun the tokenizer's 296
  for (int32_t id : out.tokens) {
    if (id < engine.tokenizer()->vocab_size()) in_vocab.push_back(id);
  }
  EXPECT_EQ(out.text, engine.tokenizer()->decode(in_vocab, /*skip_special_tokens=*/true));
}

}  // namespace
}  // namespace izwi
