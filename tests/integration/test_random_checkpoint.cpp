// Random checkpoints from the presets load through the normal loader (every tensor used, none
// missing) and generate.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/temp_dir.h"
#include "izwi/engine.h"
#include "models/checkpoint_presets.h"
#include "models/random_checkpoint.h"

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
