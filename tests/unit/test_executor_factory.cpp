// make_executor: what the engine gets from a model folder and its EngineConfig without reaching
// into io/ or models/: the Backend, the executor on it, and the EOS ids of the folder.

#include "executor/executor_factory.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/config.h"

namespace izwi {
namespace {

// EngineConfig that leaves libtorch's thread count (process-wide) as the test binary has it.
EngineConfig config_here() {
  EngineConfig config;
  config.num_threads = at::get_num_threads();
  return config;
}

TEST(ExecutorFactory, BuildsTheBackendAndTheExecutorOnIt) {
  const LoadedExecutor loaded = make_executor(testing::fixture_dir("llama-tiny"), config_here());
  ASSERT_NE(loaded.backend, nullptr);
  ASSERT_NE(loaded.executor, nullptr);
  EXPECT_TRUE(loaded.backend->cpu_kernels());
  EXPECT_EQ(loaded.executor->spec().model_type, "llama");
  EXPECT_EQ(loaded.eos_token_ids, (std::vector<int32_t>{2}));

  EngineConfig torch = config_here();
  torch.use_fast_kernels = false;
  EXPECT_STREQ(make_executor(testing::fixture_dir("llama-tiny"), torch).backend->kernels_name(), "torch");
}

TEST(ExecutorFactory, GenerationConfigAddsEosIds) {
  const testing::TempDir dir;
  for (const char* f : {"config.json", "model.safetensors"}) {
    std::filesystem::copy_file(testing::fixture_dir("llama-tiny") + "/" + f, dir.file(f));
  }
  dir.write("generation_config.json", R"({"eos_token_id": [7, 2, 9]})");
  EXPECT_EQ(make_executor(dir.path(), config_here()).eos_token_ids, (std::vector<int32_t>{2, 7, 9}))
      << "config.json's first, then generation_config.json's, each once";
}

TEST(ExecutorFactory, ABadDeviceIsNamedBeforeAnyWeightIsRead) {
  EngineConfig config = config_here();
  config.device = "tpu";
  const std::string message = testing::error_message([&] { make_executor("/no/such/model", config); });
  EXPECT_NE(message.find("EngineConfig.device 'tpu'"), std::string::npos) << message;
}

}  // namespace
}  // namespace izwi
