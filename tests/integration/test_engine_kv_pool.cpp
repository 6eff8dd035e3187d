// The paged KV pool's size: from num_kv_blocks, or from EngineConfig::kv_cache_memory_fraction of
// the memory free after the weights load, reported in ModelInfo either way.

#include <gtest/gtest.h>

#include "common/engine_checks.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "izwi/engine.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

// llama-tiny: 3 attention layers of 2 KV heads x 16, float32, 16 positions per block.
constexpr int64_t kLlamaTinyBlockBytes = 3 * 2 * 16 * 2 * 16 * 4;

TEST(EngineKvPool, ModelInfoReportsThePoolsBlocksAndBytes) {
  EngineConfig config;
  config.num_kv_blocks = 64;
  const ModelInfo llama = Engine(testing::fixture_dir("llama-tiny"), config).model_info();
  EXPECT_EQ(llama.kv_cache_blocks, 64);
  EXPECT_EQ(llama.kv_cache_bytes, 64 * kLlamaTinyBlockBytes);
  // lfm2-tiny: one attention layer (2 KV heads x 16) and three short convolutions whose block
  // snapshots keep 2 past inputs of 64 channels.
  const ModelInfo lfm2 = Engine(testing::fixture_dir("lfm2-tiny"), config).model_info();
  EXPECT_EQ(lfm2.kv_cache_bytes, 64 * (2 * 16 * 2 * 16 * 4 + 3 * 2 * 64 * 4));
  config.kv_cache_dtype = "bfloat16";
  EXPECT_EQ(Engine(testing::fixture_dir("llama-tiny"), config).model_info().kv_cache_bytes,
            64 * kLlamaTinyBlockBytes / 2);
}

TEST(EngineKvPool, AFractionOfTheFreeMemorySizesThePool) {
  const double fraction = 1e-4;
  EngineConfig config;
  config.kv_cache_memory_fraction = fraction;
  Engine engine(testing::fixture_dir("llama-tiny"), config);
  const ModelInfo info = engine.model_info();
  const double available = static_cast<double>(Backend::host().available_memory_bytes());
  EXPECT_GE(info.kv_cache_blocks, 1);
  EXPECT_EQ(info.kv_cache_bytes, info.kv_cache_blocks * kLlamaTinyBlockBytes);
  // MemAvailable moves while the test runs; a factor of 2 either way still tells the fraction
  // from num_kv_blocks' 1024 (12 MiB) on any machine with less than 60 GiB available.
  EXPECT_LE(static_cast<double>(info.kv_cache_bytes), 2 * fraction * available);
  EXPECT_GE(static_cast<double>(info.kv_cache_bytes + kLlamaTinyBlockBytes), fraction * available / 2);
  EXPECT_EQ(engine.metrics().kv_blocks_total, info.kv_cache_blocks);

  // The pool works: the reference's first case, greedily.
  testing::ReferenceTensors ref("llama-tiny");
  Request request;
  request.prompt_ids = ref.ids("case0.prompt");
  const std::vector<int32_t> expected = ref.ids("case0.generated");
  request.params.max_tokens = static_cast<int32_t>(expected.size());
  request.params.min_tokens = request.params.max_tokens;
  EXPECT_EQ(engine.generate(request).tokens, expected);
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineKvPool, AFractionTooSmallForOneBlockIsAnError) {
  EngineConfig config;
  config.kv_cache_memory_fraction = 1e-15;
  const auto load = [&] { Engine(testing::fixture_dir("llama-tiny"), config); };
  EXPECT_EQ(testing::error_code_of(load), ErrorCode::ResourceExhausted);
  EXPECT_NE(testing::error_message(load).find("kv_cache_memory_fraction"), std::string::npos)
      << testing::error_message(load);
}

}  // namespace
}  // namespace izwi
