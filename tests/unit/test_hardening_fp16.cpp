// float16 on the CPU: a float16 checkpoint loads for float32 compute (converted at load), and a
// float16 compute dtype on the CPU, which libtorch's CPU kernels cannot run, is refused when the
// engine is built rather than failing as Internal at the first step.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_support/safetensors_writer.h"
#include "common/error_message.h"
#include "common/model_runner.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "io/safetensors_tensor.h"
#include "izwi/config.h"
#include "izwi/engine.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::TempDir;

// llama-tiny's weights rounded to float16, stored as `dtype`, with its config.
void write_rounded_copy(const std::string& dir, at::ScalarType dtype) {
  const std::string src = testing::fixture_dir("llama-tiny");
  SafetensorsFile file(src + "/model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const StTensorInfo& info : file.tensors()) {
    tensors.emplace_back(info.name, read_tensor(file, info).to(at::kHalf).to(at::kFloat));
  }
  write_safetensors(dir + "/model.safetensors", tensors, dtype);
  std::filesystem::copy_file(src + "/config.json", dir + "/config.json");
}

// ModelRunner takes a fixture name under the test data folder; climb out of it to a temp folder.
std::string as_fixture(const std::string& absolute) {
  std::string up;
  for (int i = 0; i < 40; ++i) up += "../";
  return up + absolute.substr(1);
}

TEST(HardeningFp16, Float16CheckpointRunsInFloat32) {
  TempDir half, rounded;
  write_rounded_copy(half.path(), at::kHalf);
  write_rounded_copy(rounded.path(), at::kFloat);
  SafetensorsFile check(half.file("model.safetensors"));
  ASSERT_EQ(check.tensors().front().dtype, StDType::F16);

  const std::vector<int32_t> tokens = {1, 17, 42, 99, 3, 250, 7, 511};
  testing::ModelRunner from_half(as_fixture(half.path()), true);
  testing::ModelRunner from_rounded(as_fixture(rounded.path()), true);
  testing::ModelRunner original("llama-tiny", true);
  const at::Tensor a = testing::teacher_forced_logits(from_half, tokens);
  const at::Tensor b = testing::teacher_forced_logits(from_rounded, tokens);
  const at::Tensor c = testing::teacher_forced_logits(original, tokens);
  // The same float32 weights whichever way they were stored; float16 rounding away from float32.
  EXPECT_TRUE(at::equal(a, b)) << (a - b).abs().max().item<float>();
  EXPECT_TRUE(at::allclose(a, c, 2e-2, 2e-2)) << (a - c).abs().max().item<float>();

  Engine engine(half.path());
  Request r;
  r.prompt_ids = {1, 17, 42};
  r.params.max_tokens = 4;
  r.params.ignore_eos = true;
  EXPECT_EQ(engine.generate(r).tokens.size(), 4u);
}

TEST(HardeningFp16, Float16ComputeOnCpuIsRefusedAtConstruction) {
  EngineConfig config;
  config.dtype = "float16";
  auto build = [&] { Engine engine(testing::fixture_dir("llama-tiny"), config); };
  const std::string message = testing::error_message(build);
  EXPECT_EQ(testing::error_code_of(build), ErrorCode::Unsupported) << message;
  EXPECT_NE(message.find("EngineConfig.dtype"), std::string::npos) << message;
  EXPECT_NE(message.find("float16"), std::string::npos) << message;
  EXPECT_EQ(testing::error_code_of([&] { config.validate(); }), ErrorCode::Unsupported);
  config.device = "cuda";  // other devices run float16; only the CPU is refused
  EXPECT_NO_THROW(config.validate());
}

TEST(HardeningFp16, Float16WeightStorageOnCpuWorksOrIsRefusedAtConstruction) {
  EngineConfig config;
  config.weight_dtype = "float16";
  std::optional<ErrorCode> code;
  std::string message;
  try {
    Engine engine(testing::fixture_dir("llama-tiny"), config);
    Request r;
    r.prompt_ids = {1, 17, 42};
    r.params.max_tokens = 4;
    r.params.ignore_eos = true;
    try {
      EXPECT_EQ(engine.generate(r).tokens.size(), 4u);
    } catch (const Error& e) {
      ADD_FAILURE() << "built, then failed at a step: " << e.what();
    }
    return;
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  }
  EXPECT_EQ(code, ErrorCode::Unsupported) << message;
  EXPECT_NE(message.find("weight_dtype"), std::string::npos) << message;
}

}  // namespace
}  // namespace izwi
