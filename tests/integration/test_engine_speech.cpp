// Speech synthesis through the whole engine (fixture qwen3-tts-tiny with its codec): the released
// code's codes for all three cases submitted together, audio equal to the codec's decode of the
// codes (whole and streamed in chunks), prefix sharing, aborts, and bad input.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "common/codec_frames.h"
#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "engine/engine_impl.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using testing::fixture_dir;
using testing::max_abs_diff;
using testing::ReferenceTensors;

constexpr const char* kFixture = "qwen3-tts-tiny";

struct TtsCase {
  std::vector<int32_t> text_ids;
  std::vector<std::vector<int32_t>> frames;
};

SpeechRequest greedy(const TtsCase& c, const char* speaker, const char* language, SpeechTextMode mode) {
  SpeechRequest r;
  r.text_ids = c.text_ids;
  r.speaker = speaker;
  r.language = language;
  r.text_mode = mode;
  r.params.sampling.temperature = 0.0f;
  r.params.codebook_sampling.temperature = 0.0f;
  r.params.max_frames = static_cast<int32_t>(c.frames.size());
  return r;
}

class EngineSpeech : public ::testing::Test {
 protected:
  void SetUp() override {
    const ReferenceTensors ref(kFixture);
    for (int c = 0; c < 3; ++c) {
      const std::string k = "case" + std::to_string(c);
      TtsCase tc;
      tc.text_ids = ref.ids(k + ".input_ids");
      const at::Tensor codes = ref.get(k + ".codes");
      for (int64_t f = 0; f < codes.size(0); ++f) {
        std::vector<int32_t> frame;
        for (int64_t j = 0; j < codes.size(1); ++j) frame.push_back(static_cast<int32_t>(codes[f][j].item<int64_t>()));
        tc.frames.push_back(frame);
      }
      cases_.push_back(tc);
    }
    // As reference.json lists the cases.
    requests_ = {greedy(cases_[0], "alice", "english", SpeechTextMode::Streaming),
                 greedy(cases_[1], "bob", "auto", SpeechTextMode::Streaming),
                 greedy(cases_[2], "alice", "chinese", SpeechTextMode::Full)};
  }

  /// The codec's whole decode of `frames` ([frames][codebooks]).
  static at::Tensor whole_decode(const std::vector<std::vector<int32_t>>& frames) {
    return testing::decode_frames(fixture_dir(kFixture) + "/speech_tokenizer", frames);
  }

  std::vector<TtsCase> cases_;
  std::vector<SpeechRequest> requests_;
};

TEST_F(EngineSpeech, ModelInfoDescribesTheVoice) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  const ModelInfo& info = engine.model_info();
  EXPECT_TRUE(info.produces_audio);
  EXPECT_EQ(info.output_sample_rate, 24000);
  EXPECT_EQ(info.num_codebooks, 16);
  EXPECT_EQ(info.speakers, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(info.languages, (std::vector<std::string>{"chinese", "english"}));
  EXPECT_EQ(info.eos_token_ids, std::vector<int32_t>{2150});
}

TEST_F(EngineSpeech, AllCasesTogetherGiveTheReleasedCodesAndTheirAudio) {
  // With izwi's kernels, and with libtorch's ops (the path a CUDA backend takes where it has no
  // kernel of its own).
  for (const bool fast : {true, false}) {
    const char* kernels = fast ? "fast kernels" : "libtorch ops";
    EngineConfig config = testing::test_engine_config();
    config.use_fast_kernels = fast;
    Engine engine(fixture_dir(kFixture), config);
    std::vector<std::future<Output>> outputs;
    for (const SpeechRequest& r : requests_) {
      outputs.push_back(std::async(std::launch::async, [&engine, r] { return engine.synthesize(r); }));
    }
    for (size_t c = 0; c < outputs.size(); ++c) {
      const Output out = outputs[c].get();
      EXPECT_EQ(out.audio_codes, cases_[c].frames) << "case " << c << ", " << kernels;
      EXPECT_EQ(out.finish_reason, FinishReason::Length);
      EXPECT_EQ(out.sample_rate, 24000);
      ASSERT_EQ(out.audio.size(), cases_[c].frames.size() * 1920);
      const at::Tensor audio = at::tensor(out.audio);
      EXPECT_LT(max_abs_diff(audio, whole_decode(cases_[c].frames)), 1e-4) << "case " << c << ", " << kernels;
      EXPECT_GT(audio.abs().max().item<float>(), 0.01f) << "silence";
    }
    EXPECT_EQ(testing::check_idle(engine), "");
  }
}

TEST_F(EngineSpeech, StreamedChunksConcatenateToTheWholeAudio) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  const Output whole = engine.synthesize(requests_[0]);
  for (auto [first, chunk] : {std::pair{1, 1}, std::pair{1, 3}, std::pair{2, 12}}) {
    SpeechRequest r = requests_[0];
    r.first_chunk_frames = first;
    r.chunk_frames = chunk;
    StreamHandle stream = engine.synthesize_streaming(r);
    std::vector<float> audio;
    std::vector<std::vector<int32_t>> frames;
    size_t chunks_with_audio = 0;
    while (std::optional<StreamChunk> c = stream.next()) {
      if (!c->audio.empty()) {
        ++chunks_with_audio;
        EXPECT_EQ(c->audio.size() % 1920, 0u);
      }
      audio.insert(audio.end(), c->audio.begin(), c->audio.end());
      frames.insert(frames.end(), c->audio_codes.begin(), c->audio_codes.end());
    }
    EXPECT_EQ(frames, cases_[0].frames) << first << "/" << chunk;
    ASSERT_EQ(audio.size(), whole.audio.size());
    EXPECT_LT(max_abs_diff(at::tensor(audio), at::tensor(whole.audio)), 1e-4) << first << "/" << chunk;
    EXPECT_GE(chunks_with_audio, 1 + (cases_[0].frames.size() - first) / chunk) << first << "/" << chunk;
  }
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST_F(EngineSpeech, RequestsInOneVoiceShareThePromptPrefix) {
  EngineConfig config = testing::test_engine_config();
  config.block_size = 4;  // the shared role + speaker + language prefix is 9 positions
  Engine engine(fixture_dir(kFixture), config);
  const Output first = engine.synthesize(requests_[2]);
  SpeechRequest other = requests_[2];
  other.text_ids = cases_[0].text_ids;  // another text, the same voice and language
  const Output second = engine.synthesize(other);
  EXPECT_EQ(first.prefix_cache_hit_tokens, 0);
  EXPECT_EQ(second.prefix_cache_hit_tokens, 8);
  EXPECT_GT(engine.metrics().prefix_cache_hit_rate, 0.0);
  // The first request again: its 23-position prompt is cached but for the last block, and the
  // codes do not change.
  const Output again = engine.synthesize(requests_[2]);
  EXPECT_EQ(again.prefix_cache_hit_tokens, 20);
  EXPECT_EQ(again.audio_codes, cases_[2].frames);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST_F(EngineSpeech, AbortMidStreamFreesEverything) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  SpeechRequest r = requests_[1];
  r.id = "speaking";
  r.params.max_frames = 200;
  r.params.sampling.temperature = 0.9f;  // sampled: the stream is long enough to abort in the middle
  r.params.seed = 7;
  StreamHandle stream = engine.synthesize_streaming(r);
  std::optional<StreamChunk> chunk = stream.next();
  ASSERT_TRUE(chunk.has_value());
  stream.abort();
  StreamChunk last;
  testing::drain(stream, &last);
  EXPECT_TRUE(last.finished);
  EXPECT_EQ(testing::check_idle(engine), "");
  EXPECT_FALSE(engine.abort("speaking"));
}

TEST_F(EngineSpeech, SeededSamplingIsReproducible) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  SpeechRequest r = requests_[0];
  r.params = SpeechParams{};  // the released defaults: sampled
  r.params.max_frames = 12;
  r.params.seed = 1234;
  const Output a = engine.synthesize(r);
  const Output b = engine.synthesize(r);
  EXPECT_EQ(a.audio_codes, b.audio_codes);
  EXPECT_FALSE(a.audio_codes.empty());
  for (const std::vector<int32_t>& frame : a.audio_codes) {
    ASSERT_EQ(frame.size(), 16u);
    for (int32_t code : frame) EXPECT_TRUE(code >= 0 && code < 2048) << code;
  }
}

TEST_F(EngineSpeech, BadRequestsNameTheProblem) {
  Engine engine(fixture_dir(kFixture), testing::test_engine_config());
  const auto error_of = [&](SpeechRequest r) { return testing::error_message([&] { engine.synthesize(r); }); };
  SpeechRequest r = requests_[0];
  r.speaker = "carol";
  EXPECT_NE(error_of(r).find("speaker 'carol' is not supported (alice, bob)"), std::string::npos);
  r = requests_[0];
  r.language = "klingon";
  EXPECT_NE(error_of(r).find("language 'klingon' is not supported (auto, chinese, english)"), std::string::npos);
  r = requests_[0];
  r.text_ids.clear();
  EXPECT_NE(error_of(r).find("text is empty"), std::string::npos);
  r.text_ids = {590, 500, 501, 591, 501, 590, 500, 501};  // the chat framing alone
  EXPECT_NE(error_of(r).find("text is empty"), std::string::npos);
  r = requests_[0];
  r.text_ids[4] = 600;
  EXPECT_NE(error_of(r).find("text_ids[4] = 600 is outside the text vocabulary [0, 600)"), std::string::npos);
  r = requests_[0];
  r.text = "hello";
  EXPECT_NE(error_of(r).find("give text one way"), std::string::npos);
  r.text_ids.clear();
  EXPECT_NE(error_of(r).find("text needs a tokenizer"), std::string::npos);
  r = requests_[0];
  r.params.max_frames = 0;
  EXPECT_NE(error_of(r).find("max_frames = 0 must be >= 1"), std::string::npos);
  r = requests_[0];
  r.params.codebook_sampling.top_p = 0.0f;
  EXPECT_NE(error_of(r).find("SpeechParams.codebook_sampling.top_p = 0"), std::string::npos);
  r = requests_[0];
  r.chunk_frames = 0;
  EXPECT_NE(error_of(r).find("chunk_frames = 0 must be >= 1"), std::string::npos);
  // A text model is not a speech model, and a speech model takes no text request.
  Engine text(fixture_dir("qwen3-tiny"), testing::test_engine_config());
  EXPECT_NE(testing::error_message([&] { text.synthesize(requests_[0]); }).find("not a speech synthesis model"),
            std::string::npos);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST_F(EngineSpeech, AMissingCodecFolderIsNamed) {
  testing::TempDir dir;
  for (const char* file : {"config.json", "model.safetensors"}) {
    std::filesystem::copy_file(fixture_dir(kFixture) + "/" + file, dir.file(file));
  }
  const std::string message = testing::error_message([&] { Engine engine(dir.path()); });
  EXPECT_NE(message.find("speech_tokenizer"), std::string::npos) << message;
}

TEST_F(EngineSpeech, WidthsThatDisagreeWithTheWeightsNameTheTensor) {
  testing::TempDir dir;
  std::filesystem::copy_file(fixture_dir(kFixture) + "/model.safetensors", dir.file("model.safetensors"));
  std::filesystem::copy(fixture_dir(kFixture) + "/speech_tokenizer", dir.file("speech_tokenizer"));
  nlohmann::json config = nlohmann::json::parse(std::ifstream(fixture_dir(kFixture) + "/config.json"));
  config["talker_config"]["text_hidden_size"] = 32;  // the checkpoint's text embedding is 48 wide
  dir.write("config.json", config.dump());
  const std::string message = testing::error_message([&] { Engine engine(dir.path()); });
  EXPECT_NE(message.find("talker.model.text_embedding.weight"), std::string::npos) << message;
  // A codec whose codebooks do not fit the talker's.
  config["talker_config"]["text_hidden_size"] = 48;
  config["talker_config"]["num_code_groups"] = 8;
  config["talker_config"]["code_predictor_config"]["num_code_groups"] = 8;
  dir.write("config.json", config.dump());
  const std::string codec_message = testing::error_message([&] { Engine engine(dir.path()); });
  EXPECT_NE(codec_message.find("the codec has 16 codebooks of 2048 codes"), std::string::npos) << codec_message;
}

TEST_F(EngineSpeech, TextRequestsOnAnotherEngineRunAlongside) {
  Engine speech(fixture_dir(kFixture), testing::test_engine_config());
  Engine text(fixture_dir("qwen3-tiny"), testing::test_engine_config());
  const ReferenceTensors text_ref("qwen3-tiny");
  Request greedy_text;
  greedy_text.prompt_ids = text_ref.ids("case0.prompt");
  const std::vector<int32_t> expected = text_ref.ids("case0.generated");
  greedy_text.params.max_tokens = static_cast<int32_t>(expected.size());
  greedy_text.params.min_tokens = greedy_text.params.max_tokens;
  std::vector<std::future<Output>> speaking;
  for (const SpeechRequest& r : requests_) {
    speaking.push_back(std::async(std::launch::async, [&speech, r] { return speech.synthesize(r); }));
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(text.generate(greedy_text).tokens, expected);
  for (size_t c = 0; c < speaking.size(); ++c) EXPECT_EQ(speaking[c].get().audio_codes, cases_[c].frames);
  EXPECT_EQ(testing::check_idle(speech), "");
  EXPECT_EQ(testing::check_idle(text), "");
}

}  // namespace
}  // namespace izwi
