// Random checkpoints from the presets load through the normal loader (every tensor used, none
// missing) and generate.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "bench_support/checkpoint_presets.h"
#include "bench_support/random_checkpoint.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

TEST(RandomCheckpoint, TinyPresetsOfEveryArchitectureLoadAndGenerate) {
  for (const char* arch : {"llama", "qwen3", "lfm2", "voxtral_realtime"}) {
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      testing::TempDir dir;
      const RandomCheckpointInfo info = write_random_checkpoint(checkpoint_preset(arch, "tiny"), dir.path(), dtype, 7);
      EXPECT_GT(info.parameters, 0);
      Engine engine(dir.path());
      Request r;
      r.prompt_ids = {1, 5, 9};
      r.params.max_tokens = 4;
      r.params.min_tokens = 4;
      EXPECT_EQ(engine.generate(r).tokens.size(), 4u) << arch;
    }
  }
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
