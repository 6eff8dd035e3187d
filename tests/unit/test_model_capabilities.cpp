// What a model can do is said once, by CausalLM::capabilities() (models/modalities.h): each
// fixture names exactly the interfaces it implements, ModelInfo's flags are that answer, and
// asking an engine for an interface its model lacks is Unsupported naming what the model is.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error_message.h"
#include "common/model_runner.h"
#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/engine.h"
#include "models/modalities.h"

namespace izwi {
namespace {

using testing::fixture_dir;

// Which interfaces a model has, as booleans, for readable expectations.
struct Has {
  bool transcriber, speech, voice_cloner, audio_chat, audio_decoder;
  bool operator==(const Has& o) const {
    return transcriber == o.transcriber && speech == o.speech && voice_cloner == o.voice_cloner &&
           audio_chat == o.audio_chat && audio_decoder == o.audio_decoder;
  }
};

std::ostream& operator<<(std::ostream& os, const Has& h) {
  return os << "{transcriber " << h.transcriber << ", speech " << h.speech << ", voice_cloner " << h.voice_cloner
            << ", audio_chat " << h.audio_chat << ", audio_decoder " << h.audio_decoder << "}";
}

Has has(const ModelCapabilities& c) {
  return {c.transcriber != nullptr, c.speech != nullptr, c.voice_cloner != nullptr, c.audio_chat != nullptr,
          c.audio_decoder != nullptr};
}

struct Case {
  std::string fixture;
  Has expected;
};

std::vector<Case> cases() {
  return {
      {"llama-tiny", {false, false, false, false, false}},
      {"qwen3-tiny", {false, false, false, false, false}},
      {"lfm2-tiny", {false, false, false, false, false}},
      {"voxtral-realtime-tiny", {true, false, false, false, false}},
      {"qwen3-tts-tiny", {false, true, false, false, true}},    // CustomVoice: no speaker encoder
      {"lfm2-audio-tiny", {false, false, false, true, false}},  // its folder has no codec to voice answers
  };
}

TEST(ModelCapabilities, EachModelNamesTheInterfacesItImplements) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.fixture);
    const testing::ModelRunner runner(c.fixture, true);
    const CausalLM& model = runner.model();
    const ModelCapabilities caps = model.capabilities();
    EXPECT_EQ(has(caps), c.expected);
    // Each interface is the model itself, not a copy or a helper object.
    if (caps.transcriber) EXPECT_EQ(caps.transcriber, dynamic_cast<const Transcriber*>(&model));
    if (caps.speech) EXPECT_EQ(caps.speech, dynamic_cast<const SpeechSynthesizer*>(&model));
    if (caps.audio_chat) EXPECT_EQ(caps.audio_chat, dynamic_cast<const AudioChatter*>(&model));
    if (caps.audio_decoder) EXPECT_EQ(caps.audio_decoder, dynamic_cast<const AudioDecoder*>(&model));
  }
}

TEST(ModelCapabilities, ABaseSpeechModelClonesVoices) {
  const testing::TempDir dir;
  const std::string folder = testing::make_qwen3_tts_base_model(dir);
  const Engine engine(folder);
  EXPECT_TRUE(engine.model_info().clones_voices);
  EXPECT_TRUE(engine.model_info().produces_audio);
}

TEST(ModelCapabilities, ModelInfoFlagsAreTheCapabilities) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.fixture);
    const ModelInfo info = Engine(fixture_dir(c.fixture)).model_info();
    EXPECT_EQ(info.accepts_audio, c.expected.transcriber);
    EXPECT_EQ(info.produces_audio, c.expected.speech);
    EXPECT_EQ(info.clones_voices, c.expected.voice_cloner);
    EXPECT_EQ(info.audio_chat, c.expected.audio_chat);
  }
}

TEST(ModelCapabilities, AMissingInterfaceIsUnsupportedNamingWhatTheModelIs) {
  const std::vector<float> tone(24000, 0.25f);
  const auto expect_refusal = [](const std::function<void()>& call, const std::string& words) {
    EXPECT_EQ(testing::error_code_of(call), ErrorCode::Unsupported);
    const std::string message = testing::error_message(call);
    EXPECT_NE(message.find(words), std::string::npos) << message;
  };

  Engine text(fixture_dir("qwen3-tiny"));
  SpeechRequest speech;
  speech.text_ids = {1, 2, 3};
  expect_refusal([&] { text.synthesize(speech); }, "model_type 'qwen3' is a text model, not a speech synthesis model");
  expect_refusal([&] { text.transcribe(tone, 16000); }, "model_type 'qwen3' is a text model: it does not transcribe");
  expect_refusal([&] { text.audio_chat(AudioChatRequest{}); },
                 "model_type 'qwen3' is a text model: it does not do audio chat");
  expect_refusal([&] { text.create_voice(tone, 24000); },
                 "model_type 'qwen3' is a text model: it does not clone voices");

  Engine tts(fixture_dir("qwen3-tts-tiny"));
  expect_refusal([&] { tts.create_voice(tone, 24000); },
                 "model_type 'qwen3_tts' is a text-to-speech model: it does not clone voices");
  expect_refusal([&] { tts.transcribe(tone, 16000); },
                 "model_type 'qwen3_tts' is a text-to-speech model: it does not transcribe");

  Engine asr(fixture_dir("voxtral-realtime-tiny"));
  expect_refusal([&] { asr.synthesize(speech); },
                 "model_type 'voxtral_realtime' is a speech recognition model, not a speech synthesis model");
  expect_refusal([&] { asr.audio_chat(AudioChatRequest{}); },
                 "model_type 'voxtral_realtime' is a speech recognition model: it does not do audio chat");
}

}  // namespace
}  // namespace izwi
