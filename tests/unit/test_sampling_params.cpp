// The one sampling type: its validation (errors name the field), its resolution (request over the
// model's default over off), and the one reader of each head's defaults (generation_config.json).

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "common/error_message.h"
#include "common/temp_dir.h"
#include "engine/request_processor.h"
#include "io/generation_defaults.h"
#include "izwi/engine.h"
#include "izwi/errors.h"
#include "sampling/sampling_params.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct Hostile {
  SamplingParams params;
  std::string message;  ///< What the error must say, after the field.
};

std::vector<Hostile> hostile_values() {
  auto with = [](const std::function<void(SamplingParams&)>& set) {
    SamplingParams p;
    set(p);
    return p;
  };
  return {
      {with([](SamplingParams& p) { p.temperature = kNaN; }), ".temperature = nan must be finite and >= 0"},
      {with([](SamplingParams& p) { p.temperature = kInf; }), ".temperature = inf must be finite and >= 0"},
      {with([](SamplingParams& p) { p.temperature = -0.5f; }), ".temperature = -0.5 must be finite and >= 0"},
      {with([](SamplingParams& p) { p.top_k = -1; }), ".top_k = -1 must be >= 0"},
      {with([](SamplingParams& p) { p.top_p = 0.0f; }), ".top_p = 0 must be in (0, 1]"},
      {with([](SamplingParams& p) { p.top_p = 1.5f; }), ".top_p = 1.5 must be in (0, 1]"},
      {with([](SamplingParams& p) { p.top_p = kNaN; }), ".top_p = nan must be in (0, 1]"},
      {with([](SamplingParams& p) { p.repetition_penalty = 0.0f; }), ".repetition_penalty = 0 must be finite and > 0"},
      {with([](SamplingParams& p) { p.repetition_penalty = -kInf; }),
       ".repetition_penalty = -inf must be finite and > 0"},
  };
}

TEST(SamplingParams, HostileValuesAreInvalidArgumentsNamingTheField) {
  for (const Hostile& h : hostile_values()) {
    const auto check = [&] { validate_sampling(h.params, "SpeechParams.codebook_sampling"); };
    EXPECT_EQ(error_code_of(check), ErrorCode::InvalidArgument) << h.message;
    EXPECT_NE(error_message(check).find("SpeechParams.codebook_sampling" + h.message), std::string::npos)
        << error_message(check);
  }
}

TEST(SamplingParams, UnsetAndBoundaryValuesAreValid) {
  EXPECT_NO_THROW(validate_sampling({}, "params.sampling"));
  EXPECT_NO_THROW(validate_sampling({0.0f, 0, 1.0f, 1.0f}, "params.sampling"));
  EXPECT_NO_THROW(validate_sampling({2.0f, 1, 1e-6f, 1e-3f}, "params.sampling"));
}

TEST(SamplingParams, ResolutionTakesTheRequestOverTheModelDefaultOverOff) {
  const SamplingParams model_default{0.9f, 50, std::nullopt, 1.05f};
  const ResolvedSampling none = resolve_sampling({}, {});
  EXPECT_EQ(none.temperature, 0.0f);
  EXPECT_EQ(none.top_k, 0);
  EXPECT_EQ(none.top_p, 1.0f);
  EXPECT_EQ(none.repetition_penalty, 1.0f);

  const ResolvedSampling defaults = resolve_sampling({}, model_default);
  EXPECT_EQ(defaults.temperature, 0.9f);
  EXPECT_EQ(defaults.top_k, 50);
  EXPECT_EQ(defaults.top_p, 1.0f);  // the model has none: off
  EXPECT_EQ(defaults.repetition_penalty, 1.05f);

  SamplingParams request;
  request.temperature = 0.0f;  // an explicit 0 (greedy) is a value, not "unset"
  request.top_p = 0.8f;
  const ResolvedSampling r = resolve_sampling(request, model_default);
  EXPECT_EQ(r.temperature, 0.0f);
  EXPECT_EQ(r.top_k, 50);
  EXPECT_EQ(r.top_p, 0.8f);
  EXPECT_EQ(r.repetition_penalty, 1.05f);
}

TEST(SamplingParams, TopKOfOneIsGreedy) {
  SamplingParams request;
  request.top_k = 1;
  EXPECT_EQ(resolve_sampling(request, {0.7f, 20, 0.9f, 1.0f}).temperature, 0.0f);
  EXPECT_EQ(resolve_sampling({}, {0.7f, 1, 0.9f, 1.0f}).temperature, 0.0f);
}

TEST(SamplingParams, HeadsWithoutAPenaltyRejectOne) {
  SamplingParams p;
  p.repetition_penalty = 1.0f;
  EXPECT_NO_THROW(validate_sampling_without_penalty(p, "AudioChatRequest.audio_sampling"));
  p.repetition_penalty = 1.2f;
  const auto check = [&] { validate_sampling_without_penalty(p, "AudioChatRequest.audio_sampling"); };
  EXPECT_EQ(error_code_of(check), ErrorCode::InvalidArgument);
  EXPECT_NE(error_message(check).find("AudioChatRequest.audio_sampling.repetition_penalty = 1.2"), std::string::npos);
  p.repetition_penalty = kNaN;  // the range check still comes first
  EXPECT_NE(error_message(check).find("must be finite and > 0"), std::string::npos);
}

TEST(SamplingParams, CodebookStateHasItsOwnSeededStream) {
  SamplingParams request;
  request.top_p = 0.5f;
  GenerationParams main;
  main.seed = 7;
  const SamplingState a = make_codebook_sampling_state(request, {0.9f, 50, std::nullopt, std::nullopt}, 7);
  const SamplingState b = make_codebook_sampling_state(request, {0.9f, 50, std::nullopt, std::nullopt}, 7);
  const SamplingState head = make_sampling_state(main, {}, {});
  EXPECT_EQ(a.temperature, 0.9f);
  EXPECT_EQ(a.top_k, 50);
  EXPECT_EQ(a.top_p, 0.5f);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_NE(a.seed, head.seed);  // the same request seed must not replay the main head's draws
}

GenerationDefaults read_file(const std::string& json, GenerationDefaultsRule rule) {
  TempDir dir;
  dir.write("generation_config.json", json);
  return read_generation_defaults(dir.path(), rule);
}

TEST(GenerationDefaults, TextWithoutDoSampleIsGreedy) {
  TempDir empty;
  const SamplingParams none = read_generation_defaults(empty.path(), GenerationDefaultsRule::HfGenerate).sampling;
  EXPECT_EQ(none.temperature, 0.0f);
  EXPECT_FALSE(none.top_k || none.top_p || none.repetition_penalty);
  // The text fixtures' files: no do_sample, so their models stay greedy by default.
  for (const char* fixture : {"llama-tiny", "qwen3-tiny", "lfm2-tiny", "voxtral-realtime-tiny"}) {
    const SamplingParams s =
        read_generation_defaults(std::string(IZWI_TEST_DATA_DIR) + "/" + fixture, GenerationDefaultsRule::HfGenerate)
            .sampling;
    EXPECT_EQ(s.temperature, 0.0f) << fixture;
  }
  // Absent do_sample is HF's false: its sampling keys are ignored, its penalty is not.
  const SamplingParams absent =
      read_file(R"({"temperature": 0.6, "top_k": 20, "top_p": 0.9, "repetition_penalty": 1.1})",
                GenerationDefaultsRule::HfGenerate)
          .sampling;
  EXPECT_EQ(absent.temperature, 0.0f);
  EXPECT_FALSE(absent.top_k || absent.top_p);
  EXPECT_EQ(absent.repetition_penalty, 1.1f);
  const SamplingParams off =
      read_file(R"({"do_sample": false, "temperature": 0.6})", GenerationDefaultsRule::HfGenerate).sampling;
  EXPECT_EQ(off.temperature, 0.0f);
}

TEST(GenerationDefaults, TextWithDoSampleTakesTheFilesValues) {
  const SamplingParams s = read_file(R"({"do_sample": true, "temperature": 0.6, "top_k": 20, "top_p": 0.95})",
                                     GenerationDefaultsRule::HfGenerate)
                               .sampling;
  EXPECT_EQ(s.temperature, 0.6f);
  EXPECT_EQ(s.top_k, 20);
  EXPECT_EQ(s.top_p, 0.95f);
  EXPECT_FALSE(s.repetition_penalty);
  // HF's temperature when the file has none; the other omitted keys stay off.
  const SamplingParams bare = read_file(R"({"do_sample": true})", GenerationDefaultsRule::HfGenerate).sampling;
  EXPECT_EQ(bare.temperature, 1.0f);
  EXPECT_FALSE(bare.top_k || bare.top_p);
  EXPECT_FALSE(read_file(R"({"do_sample": true})", GenerationDefaultsRule::HfGenerate).codebook_sampling.temperature);
}

TEST(GenerationDefaults, Qwen3TtsHeadsFromTheirKeysElseTheReleasedDefaults) {
  TempDir empty;
  const GenerationDefaults released = read_generation_defaults(empty.path(), GenerationDefaultsRule::Qwen3Tts);
  EXPECT_EQ(released.sampling.temperature, 0.9f);
  EXPECT_EQ(released.sampling.top_k, 50);
  EXPECT_EQ(released.sampling.top_p, 1.0f);
  EXPECT_EQ(released.sampling.repetition_penalty, 1.05f);
  EXPECT_EQ(released.codebook_sampling.temperature, 0.9f);
  EXPECT_EQ(released.codebook_sampling.top_k, 50);
  EXPECT_EQ(released.codebook_sampling.top_p, 1.0f);
  EXPECT_FALSE(released.codebook_sampling.repetition_penalty);  // the per-frame head has none

  const GenerationDefaults d =
      read_file(R"({"temperature": 0.7, "top_k": 30, "repetition_penalty": 1.2, "subtalker_temperature": 0.5,
                    "subtalker_top_k": 10, "subtalker_top_p": 0.8})",
                GenerationDefaultsRule::Qwen3Tts);
  EXPECT_EQ(d.sampling.temperature, 0.7f);
  EXPECT_EQ(d.sampling.top_k, 30);
  EXPECT_EQ(d.sampling.repetition_penalty, 1.2f);
  EXPECT_EQ(d.codebook_sampling.temperature, 0.5f);
  EXPECT_EQ(d.codebook_sampling.top_k, 10);
  EXPECT_EQ(d.codebook_sampling.top_p, 0.8f);

  // Each head's own do_sample switch.
  const GenerationDefaults greedy_frames =
      read_file(R"({"subtalker_dosample": false, "subtalker_temperature": 0.5})", GenerationDefaultsRule::Qwen3Tts);
  EXPECT_EQ(greedy_frames.codebook_sampling.temperature, 0.0f);
  EXPECT_EQ(greedy_frames.sampling.temperature, 0.9f);
  EXPECT_EQ(read_file(R"({"do_sample": false})", GenerationDefaultsRule::Qwen3Tts).sampling.temperature, 0.0f);
}

TEST(GenerationDefaults, Lfm2AudioIsGreedyWhateverTheFileSays) {
  const GenerationDefaults d =
      read_file(R"({"do_sample": true, "temperature": 0.8})", GenerationDefaultsRule::Lfm2Audio);
  EXPECT_EQ(resolve_sampling({}, d.sampling).temperature, 0.0f);
  EXPECT_EQ(resolve_sampling({}, d.codebook_sampling).temperature, 0.0f);
}

TEST(GenerationDefaults, HostileFilesAreInvalidFormatNamingFileAndField) {
  for (const auto& [json, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"do_sample": "yes"})", "do_sample"},
                                                        {R"({"do_sample": true, "top_k": -1})", "top_k"},
                                                        {R"({"do_sample": true, "top_p": 0})", "top_p"},
                                                        {R"({"do_sample": true, "temperature": -1})", "temperature"},
                                                        {R"({"temperature": 1e30})", "temperature"},
                                                        {R"({"repetition_penalty": 0})", "repetition_penalty"},
                                                        {R"({"top_k": 1e12})", "top_k"}}) {
    for (const GenerationDefaultsRule rule : {GenerationDefaultsRule::HfGenerate, GenerationDefaultsRule::Qwen3Tts}) {
      TempDir dir;
      dir.write("generation_config.json", json);
      const auto read = [&] { read_generation_defaults(dir.path(), rule); };
      EXPECT_EQ(error_code_of(read), ErrorCode::InvalidFormat) << json;
      const std::string message = error_message(read);
      EXPECT_NE(message.find(dir.file("generation_config.json")), std::string::npos) << message;
      EXPECT_NE(message.find("'" + field + "'"), std::string::npos) << message;
    }
  }
  const auto subtalker = [] { read_file(R"({"subtalker_top_p": 2})", GenerationDefaultsRule::Qwen3Tts); };
  EXPECT_NE(error_message(subtalker).find("'subtalker_top_p'"), std::string::npos);
}

TEST(GenerationDefaults, ModelsReportEachHeadsDefaults) {
  const std::string data = IZWI_TEST_DATA_DIR;
  const ModelInfo tts = Engine(data + "/qwen3-tts-tiny").model_info();  // no generation_config.json: released
  EXPECT_EQ(tts.default_sampling.temperature, 0.9f);
  EXPECT_EQ(tts.default_sampling.repetition_penalty, 1.05f);
  EXPECT_EQ(tts.default_codebook_sampling.top_k, 50);
  const ModelInfo text = Engine(data + "/llama-tiny").model_info();
  EXPECT_EQ(text.default_sampling.temperature, 0.0f);
  EXPECT_FALSE(text.default_codebook_sampling.temperature);
}

// Each request path checks its sampling once, in the engine, under the caller's name for it.
TEST(SamplingParams, EveryRequestPathNamesItsSamplingFields) {
  const std::string data = IZWI_TEST_DATA_DIR;
  const auto expect_invalid = [](const std::function<void()>& submit, const std::string& part) {
    EXPECT_EQ(error_code_of(submit), ErrorCode::InvalidArgument) << part;
    EXPECT_NE(error_message(submit).find(part), std::string::npos) << error_message(submit);
  };
  Engine text(data + "/llama-tiny");
  Request request;
  request.prompt_ids = {1, 2, 3};
  request.params.sampling.top_p = 2.0f;
  expect_invalid([&] { text.generate(request); }, "params.sampling.top_p = 2 must be in (0, 1]");

  Engine tts(data + "/qwen3-tts-tiny");
  SpeechRequest speech;
  speech.text_ids = {590, 500, 501, 245, 591};
  speech.params.sampling.top_k = -1;
  expect_invalid([&] { tts.synthesize(speech); }, "SpeechParams.sampling.top_k = -1 must be >= 0");
  speech.params.sampling = {};
  speech.params.codebook_sampling.repetition_penalty = 1.3f;  // the per-frame head has none
  expect_invalid([&] { tts.synthesize(speech); }, "SpeechParams.codebook_sampling.repetition_penalty = 1.3");

  Engine lfm(data + "/lfm2-audio-tiny");
  AudioChatRequest chat;
  chat.pre_ids = {1, 6};
  chat.text_sampling.repetition_penalty = 1.1f;  // its ids interleave with frames
  expect_invalid([&] { lfm.audio_chat(chat); }, "AudioChatRequest.text_sampling.repetition_penalty = 1.1");
  chat.text_sampling = {};
  chat.audio_sampling.temperature = kNaN;
  expect_invalid([&] { lfm.audio_chat(chat); }, "AudioChatRequest.audio_sampling.temperature = nan");

  Engine asr(data + "/voxtral-realtime-tiny");
  TranscriptionOptions options;
  options.pad_token_id = 0;
  options.sampling.temperature = -1.0f;
  expect_invalid([&] { asr.start_transcription(options); }, "TranscriptionOptions.sampling.temperature = -1");
}

}  // namespace
}  // namespace izwi
