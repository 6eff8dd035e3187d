// Random checkpoints from the presets load through the normal loader (every tensor used, none
// missing) and generate.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_support/checkpoint_presets.h"
#include "bench_support/random_checkpoint.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

// The checkpoint in `dir` loads and generates the 4 tokens asked for.
void expect_generates(const std::string& dir, const std::string& arch) {
  Engine engine(dir);
  Request r;
  r.prompt_ids = {1, 5, 9};
  r.params.max_tokens = 4;
  r.params.min_tokens = 4;
  EXPECT_EQ(engine.generate(r).tokens.size(), 4u) << arch;
}

TEST(RandomCheckpoint, TinyPresetsOfEveryArchitectureLoadAndGenerate) {
  for (const char* arch : {"llama", "qwen3", "lfm2", "voxtral_realtime"}) {
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      testing::TempDir dir;
      const RandomCheckpointInfo info = write_random_checkpoint(checkpoint_preset(arch, "tiny"), dir.path(), dtype, 7);
      EXPECT_GT(info.parameters, 0);
      expect_generates(dir.path(), arch);
    }
  }
}

/// The value of an e4m3fn byte, from the format's definition (bias 7, 3 mantissa bits,
/// subnormals at exponent 0), written here independently of the library's table.
float e4m3_value(uint8_t byte) {
  const int exponent = (byte >> 3) & 15, mantissa = byte & 7;
  const float magnitude = exponent == 0 ? static_cast<float>(mantissa) / 8.0f * std::ldexp(1.0f, -6)
                                        : (1.0f + static_cast<float>(mantissa) / 8.0f) * std::ldexp(1.0f, exponent - 7);
  return (byte & 0x80) != 0 ? -magnitude : magnitude;
}

float bf16_value(const uint8_t* p) {
  const uint32_t bits = static_cast<uint32_t>(p[0] | (p[1] << 8)) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// --dtype fp8 (izwi-make-checkpoint): the linear layers of the bf16 checkpoint of the same seed in
// FP8 as compressed-tensors stores them, every weight the nearest e4m3 value of w / scale (within
// half a step: 2^-4 of it, or 2^-10 of the scale among the subnormals) with scale = the row's max
// |w| / 448; everything else bf16 as in the source; the folder loads and generates.
TEST(RandomCheckpoint, Fp8CheckpointHoldsTheBf16SourcesLinearLayersRoundedToE4m3) {
  for (const char* arch : {"llama", "qwen3", "lfm2"}) {
    testing::TempDir bf16_dir, fp8_dir;
    write_random_checkpoint(checkpoint_preset(arch, "tiny"), bf16_dir.path(), at::kBFloat16, 9);
    write_random_fp8_checkpoint(checkpoint_preset(arch, "tiny"), fp8_dir.path(), 9);
    std::ifstream config_file(fp8_dir.file("config.json"));
    const nlohmann::json config = nlohmann::json::parse(config_file);
    EXPECT_EQ(config.at("quantization_config").at("quant_method"), "compressed-tensors") << arch;

    const SafetensorsFile source(bf16_dir.file("model.safetensors")), fp8(fp8_dir.file("model.safetensors"));
    int64_t fp8_layers = 0;
    for (const StTensorInfo& t : source.tensors()) {
      const StTensorInfo* stored = fp8.find(t.name);
      ASSERT_NE(stored, nullptr) << arch << " " << t.name;
      if (stored->dtype != StDType::F8_E4M3) {
        EXPECT_EQ(stored->dtype, StDType::BF16) << t.name;
        EXPECT_EQ(std::memcmp(source.data(t), fp8.data(*stored), t.end - t.begin), 0) << t.name;
        continue;
      }
      ++fp8_layers;
      EXPECT_EQ(t.shape.size(), 2u) << t.name;
      EXPECT_EQ(t.name.find("embed"), std::string::npos) << t.name;
      const StTensorInfo* scale = fp8.find(t.name.substr(0, t.name.size() - 6) + "weight_scale");
      ASSERT_NE(scale, nullptr) << t.name;
      ASSERT_EQ(scale->dtype, StDType::F32) << t.name;
      ASSERT_EQ(scale->shape, (std::vector<int64_t>{t.shape[0], 1})) << t.name;
      const int64_t out = t.shape[0], in = t.shape[1];
      for (int64_t o = 0; o < out; ++o) {
        float s = 0, row_max = 0;
        std::memcpy(&s, fp8.data(*scale) + 4 * o, 4);
        for (int64_t i = 0; i < in; ++i)
          row_max = std::max(row_max, std::fabs(bf16_value(source.data(t) + 2 * (o * in + i))));
        EXPECT_FLOAT_EQ(s, row_max / 448.0f) << t.name << " row " << o;
        for (int64_t i = 0; i < in; ++i) {
          const float w = bf16_value(source.data(t) + 2 * (o * in + i));
          const float q = e4m3_value(fp8.data(*stored)[o * in + i]) * s;
          ASSERT_LE(std::fabs(q - w), std::max(std::fabs(w) / 16.0f, s * std::ldexp(1.0f, -10)) * 1.0001f)
              << t.name << " [" << o << ", " << i << "]";
        }
      }
    }
    EXPECT_GT(fp8_layers, 0) << arch;
    expect_generates(fp8_dir.path(), arch);
  }
  EXPECT_THROW(write_random_fp8_checkpoint(checkpoint_preset("voxtral_realtime", "tiny"), testing::TempDir().path(), 9),
               Error);
}

// The qwen3_tts presets also write speech_tokenizer/ (config + codec decoder tensors), so the
// folder synthesizes: a fixed frame count gives that many frames of finite audio.
TEST(RandomCheckpoint, TinyQwen3TtsSynthesizesFiniteAudio) {
  constexpr int32_t kFrames = 5;
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    testing::TempDir dir;
    const RandomCheckpointInfo info =
        write_random_checkpoint(checkpoint_preset("qwen3_tts", "tiny"), dir.path(), dtype, 11);
    EXPECT_GT(info.parameters, 0);
    EXPECT_GT(info.codec_parameters, 0);
    ASSERT_TRUE(std::filesystem::exists(dir.file("speech_tokenizer/config.json")));
    ASSERT_TRUE(std::filesystem::exists(dir.file("speech_tokenizer/model.safetensors")));
    EngineConfig config;
    config.num_threads = 1;  // tiny shapes: one thread is fastest, and robust on a busy machine
    Engine engine(dir.path(), config);
    ASSERT_TRUE(engine.model_info().produces_audio);
    EXPECT_GT(engine.model_info().decode_weight_bytes, 0);
    SpeechRequest r;
    r.text_ids = {1, 77, 198, 300, 301, 302, 2, 198, 1, 77, 198};
    r.params.min_frames = kFrames;
    r.params.max_frames = kFrames;
    r.params.seed = 5;
    const Output out = engine.synthesize(r);
    EXPECT_EQ(out.audio_codes.size(), static_cast<size_t>(kFrames));
    ASSERT_EQ(out.audio.size(), static_cast<size_t>(kFrames * 1920));
    for (float x : out.audio) ASSERT_TRUE(std::isfinite(x));
  }
}

// With a tokenizer in the folder, text goes through the released chat framing: the same codes
// as the ids of that framing (greedy). The preset's im_start/im_end ids are the tokenizer's.
TEST(RandomCheckpoint, TinyQwen3TtsTextMatchesFramedIds) {
  testing::TempDir dir;
  write_random_checkpoint(checkpoint_preset("qwen3_tts", "tiny"), dir.path(), at::kFloat, 13);
  std::filesystem::copy_file(testing::fixture_dir("tokenizer-qwen2-style") + "/tokenizer.json",
                             dir.file("tokenizer.json"));
  EngineConfig config;
  config.num_threads = 1;
  Engine engine(dir.path(), config);
  ASSERT_NE(engine.tokenizer(), nullptr);
  const std::vector<int32_t> ids =
      engine.tokenizer()->encode("<|im_start|>assistant\nhello<|im_end|>\n<|im_start|>assistant\n");
  ASSERT_GE(ids.size(), 9u);
  EXPECT_EQ(ids.front(), 1);  // <|im_start|>
  SpeechRequest by_text, by_ids;
  by_text.text = "hello";
  by_ids.text_ids = ids;
  for (SpeechRequest* r : {&by_text, &by_ids}) {
    r->params.min_frames = 6;
    r->params.max_frames = 6;
    r->params.sampling.temperature = 0.0f;
    r->params.codebook_sampling.temperature = 0.0f;
  }
  const Output a = engine.synthesize(by_text), b = engine.synthesize(by_ids);
  ASSERT_EQ(a.audio_codes.size(), 6u);
  EXPECT_EQ(a.audio_codes, b.audio_codes);
}

TEST(RandomCheckpoint, SameSeedSameBytes) {
  testing::TempDir a, b;
  write_random_checkpoint(checkpoint_preset("lfm2", "tiny"), a.path(), at::kFloat, 3);
  write_random_checkpoint(checkpoint_preset("lfm2", "tiny"), b.path(), at::kFloat, 3);
  std::ifstream fa(a.file("model.safetensors"), std::ios::binary), fb(b.file("model.safetensors"), std::ios::binary);
  const std::string sa((std::istreambuf_iterator<char>(fa)), {}), sb((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_EQ(sa, sb);
}

TEST(RandomCheckpoint, UnknownPresetNamesTheChoices) {
  try {
    checkpoint_preset("llama", "7b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("llama/llama-3.2-1b"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace izwi
