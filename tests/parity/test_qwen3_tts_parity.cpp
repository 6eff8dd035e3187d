// Qwen3-TTS against the released code (fixture qwen3-tts-tiny): prompts built from the text ids,
// speaker, language and text mode; greedy talker and code predictor with repetition penalty 1.05
// and the control ids suppressed. Every code of every frame equal, the talker hidden state that
// produced each frame within 1e-4.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "common/model_runner.h"
#include "common/reference.h"
#include "engine/request_processor.h"
#include "models/qwen3_tts/qwen3_tts.h"

namespace izwi {
namespace {

using testing::FeedRequest;
using testing::max_abs_diff;
using testing::ModelRunner;
using testing::ReferenceTensors;

struct TtsCase {
  const char* speaker;
  const char* language;
  SpeechTextMode mode;
};

// As reference.json lists them: streaming text for cases 0 and 1, the whole text first for case 2.
const TtsCase kCases[] = {{"alice", "english", SpeechTextMode::Streaming},
                          {"bob", "auto", SpeechTextMode::Streaming},
                          {"alice", "chinese", SpeechTextMode::Full}};

// Case c of the fixture generated greedily, both heads' sampling as the engine resolves it: each
// frame and the talker hidden state that produced it, until the reference's frame count or an end
// of speech.
struct Generated {
  std::vector<std::vector<int32_t>> frames;
  std::vector<at::Tensor> hidden;
};

Generated generate(ModelRunner& runner, const ReferenceTensors& ref, int c) {
  const std::string k = "case" + std::to_string(c);
  const int64_t frames = ref.get(k + ".codes").size(0);
  SpeechRequest request;
  request.text_ids = ref.ids(k + ".input_ids");
  request.speaker = kCases[c].speaker;
  request.language = kCases[c].language;
  request.text_mode = kCases[c].mode;
  request.params.sampling.temperature = 0.0f;
  request.params.codebook_sampling.temperature = 0.0f;
  request.params.max_frames = static_cast<int32_t>(frames);
  SpeechPrompt prompt = runner.model().capabilities().speech->speech_prompt(request, nullptr);
  auto& state = dynamic_cast<Qwen3TtsRequestState&>(*prompt.state);
  state.record_hidden = true;

  prompt.params.sampling = request.params.sampling;
  SamplingState sampling =
      make_sampling_state(prompt.params, runner.spec().default_sampling, runner.spec().eos_token_ids);
  *prompt.codebook_sampling = make_codebook_sampling_state(
      request.params.codebook_sampling, runner.spec().default_codebook_sampling, request.params.seed);
  sampling.suppressed = runner.spec().suppressed_token_ids;
  std::vector<int32_t> tokens = prompt.keys;
  sampling.history = &tokens;
  sampling.history_begin = tokens.size();  // the penalty sees generated codebook-0 ids only
  const uint64_t seq = static_cast<uint64_t>(c + 1);
  int32_t fed = 0;
  while (static_cast<int64_t>(state.frames.size()) < frames) {
    const int32_t count = static_cast<int32_t>(tokens.size()) - fed;
    StepOutput out = runner.sample({FeedRequest{seq, &tokens, fed, count, &state, &sampling}})[0];
    fed += count;
    tokens.push_back(out.token);
    ++sampling.num_generated;
    if (out.codes.empty()) break;  // the end of speech
  }
  runner.free(seq);
  return Generated{state.frames, state.hidden};
}

class Qwen3TtsParity : public ::testing::TestWithParam<bool> {};

TEST_P(Qwen3TtsParity, GreedyFramesAndTalkerHiddenMatchTheReleasedCode) {
  const ReferenceTensors ref("qwen3-tts-tiny");
  ModelRunner runner("qwen3-tts-tiny", GetParam());
  for (int c = 0; c < 3; ++c) {
    const std::string k = "case" + std::to_string(c);
    const at::Tensor codes = ref.get(k + ".codes");
    const Generated generated = generate(runner, ref, c);
    ASSERT_EQ(static_cast<int64_t>(generated.frames.size()), codes.size(0)) << k << ": ended early";
    for (int64_t f = 0; f < codes.size(0); ++f) {
      std::vector<int32_t> expected;
      for (int64_t j = 0; j < codes.size(1); ++j) expected.push_back(static_cast<int32_t>(codes[f][j].item<int64_t>()));
      EXPECT_EQ(generated.frames[static_cast<size_t>(f)], expected) << k << " frame " << f;
    }
    const at::Tensor hidden = ref.get(k + ".talker_hidden");
    ASSERT_EQ(static_cast<int64_t>(generated.hidden.size()), hidden.size(0));
    EXPECT_LT(max_abs_diff(at::stack(generated.hidden), hidden), 1e-4) << k;
  }
}

// bf16 activations, weights and K/V (what a GPU serves in) on the test device. A greedy frame may
// differ where bf16 rounding breaks a near tie, and every later frame then follows another path;
// so the talker hidden states are compared up to and including the first frame that differs
// (each computed from the same inputs as the reference's). Measured on the CPU (libtorch's bf16
// ops): max abs 0.031-0.048 (entries up to 3.7), the first 4, 0 and 4 of 19 frames equal; about
// 3x that allowed. Not yet measured on a GPU.
constexpr double kTalkerHiddenBf16MaxAbs = 0.15;

TEST(Qwen3TtsParityBf16, TalkerHiddenWithinTheBf16ToleranceWhileTheFramesAgree) {
  const ReferenceTensors ref("qwen3-tts-tiny");
  ModelRunner runner("qwen3-tts-tiny", true, false, 96, 16, at::kBFloat16, "auto", "bfloat16");
  for (int c = 0; c < 3; ++c) {
    const std::string k = "case" + std::to_string(c);
    const at::Tensor codes = ref.get(k + ".codes").to(at::kInt);
    const at::Tensor hidden = ref.get(k + ".talker_hidden");
    const Generated generated = generate(runner, ref, c);
    ASSERT_FALSE(generated.hidden.empty()) << k;
    size_t agree = 0;  // frames equal to the reference's, from the first
    while (agree < generated.frames.size() &&
           at::equal(at::tensor(generated.frames[agree], at::kInt), codes[static_cast<int64_t>(agree)])) {
      ++agree;
    }
    const int64_t compared = static_cast<int64_t>(std::min(agree + 1, generated.hidden.size()));
    const double diff = max_abs_diff(at::stack(generated.hidden).narrow(0, 0, compared), hidden.narrow(0, 0, compared));
    std::printf(
        "qwen3-tts bf16 %s: %zu of %lld frames equal to the reference; talker hidden max abs %.3g over %lld "
        "(largest entry %.3g)\n",
        k.c_str(), agree, static_cast<long long>(codes.size(0)), diff, static_cast<long long>(compared),
        hidden.abs().max().item<double>());
    EXPECT_LT(diff, kTalkerHiddenBf16MaxAbs) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, Qwen3TtsParity, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fast" : "Plain"; });

TEST(Qwen3TtsPrompt, NamesUnknownSpeakersAndLanguagesWithTheValidOnes) {
  ModelRunner runner("qwen3-tts-tiny", true);
  SpeechRequest request;
  request.text_ids = ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids");
  request.speaker = "carol";
  try {
    runner.model().capabilities().speech->speech_prompt(request, nullptr);
    FAIL() << "unknown speaker accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("speaker 'carol' is not supported (alice, bob)"), std::string::npos)
        << e.what();
  }
  request.speaker = "Alice";  // names are matched without case, as released
  request.language = "klingon";
  try {
    runner.model().capabilities().speech->speech_prompt(request, nullptr);
    FAIL() << "unknown language accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("language 'klingon' is not supported (auto, chinese, english)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace izwi
