// Non-finite weights: a NaN or Inf in a small tensor (norm scales, biases, kernels: at most
// WeightSource::kAlwaysCheckedElements) is always refused at load, naming the file and the tensor;
// large matrices are scanned only with EngineConfig::check_weights_finite (a pass over most bytes).

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bench_support/safetensors_writer.h"
#include "codec/codec_decoder.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "io/safetensors_tensor.h"
#include "io/weight_source.h"
#include "izwi/config.h"
#include "izwi/engine.h"
#include "izwi/errors.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

using testing::TempDir;

// A copy of the fixture folder `src` whose tensor `poisoned` has `value` at element 3.
void write_poisoned_copy(const std::string& src, const std::string& dir, const std::string& poisoned, float value) {
  for (const auto& entry : std::filesystem::directory_iterator(src)) {
    if (entry.path().filename() != "model.safetensors") {
      std::filesystem::copy(entry.path(), dir + "/" + entry.path().filename().string(),
                            std::filesystem::copy_options::recursive);
    }
  }
  SafetensorsFile file(src + "/model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  bool found = false;
  for (const StTensorInfo& info : file.tensors()) {
    at::Tensor t = read_tensor(file, info).to(at::kFloat).clone();
    if (info.name == poisoned) {
      t.view({-1})[3] = value;
      found = true;
    }
    tensors.emplace_back(info.name, t);
  }
  ASSERT_TRUE(found) << poisoned;
  write_safetensors(dir + "/model.safetensors", tensors, at::kFloat);
}

constexpr const char* kTensor = "model.layers.1.mlp.down_proj.weight";

TEST(HardeningWeights, NonFiniteWeightIsRefusedWhenChecked) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    TempDir dir;
    write_poisoned_copy(testing::fixture_dir("llama-tiny"), dir.path(), kTensor, bad);
    EngineConfig config;
    config.check_weights_finite = true;
    auto build = [&] { Engine engine(dir.path(), config); };
    const std::string message = testing::error_message(build);
    EXPECT_EQ(testing::error_code_of(build), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find(kTensor), std::string::npos) << message;
    EXPECT_NE(message.find(dir.file("model.safetensors")), std::string::npos) << message;
    EXPECT_NE(message.find("1 non-finite"), std::string::npos) << message;
  }
}

// The probe's case: a NaN in a norm scale, no opt-in. Every tensor of the tiny fixture is small.
TEST(HardeningWeights, NonFiniteSmallTensorIsAlwaysRefused) {
  for (const char* tensor : {"model.norm.weight", "model.layers.0.input_layernorm.weight", kTensor}) {
    TempDir dir;
    write_poisoned_copy(testing::fixture_dir("llama-tiny"), dir.path(), tensor,
                        std::numeric_limits<float>::quiet_NaN());
    auto build = [&] { Engine engine(dir.path()); };
    const std::string message = testing::error_message(build);
    EXPECT_EQ(testing::error_code_of(build), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find(std::string("'") + tensor + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(dir.file("model.safetensors")), std::string::npos) << message;
  }
}

TEST(HardeningWeights, CheckPassesFiniteWeights) {
  EngineConfig config;
  config.check_weights_finite = true;
  EXPECT_NO_THROW(Engine engine(testing::fixture_dir("llama-tiny"), config));
  EXPECT_TRUE(EngineConfig::from_json_string(R"({"check_weights_finite": true})").check_weights_finite);
}

// Serves one tensor of any shape, NaN at element 3.
class PoisonedSource final : public WeightSource {
 public:
  PoisonedSource() : WeightSource(at::kFloat, at::kFloat, at::kCPU) {}
  bool contains(const std::string&) const override { return true; }
  void skip(const std::string&) override {}
  void finish() const override {}

 protected:
  at::Tensor read(const std::string&, const std::vector<int64_t>& shape) override {
    at::Tensor t = at::zeros(shape, at::kFloat);
    t.view({-1})[3] = std::numeric_limits<float>::quiet_NaN();
    return t;
  }
  std::string location(const std::string&) const override { return "poisoned.safetensors"; }
};

TEST(HardeningWeights, LargeMatricesAreScannedOnlyWhenChecked) {
  constexpr int64_t kLimit = WeightSource::kAlwaysCheckedElements;
  PoisonedSource source;
  EXPECT_NO_THROW(source.take_matrix("big", {kLimit / 512 + 1, 512}));  // one row over: opt-in
  auto small = [&] { source.take_matrix("edge", {kLimit / 512, 512}); };
  EXPECT_EQ(testing::error_code_of(small), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message(small).find("poisoned.safetensors: tensor 'edge' holds 1 non-finite"),
            std::string::npos)
      << testing::error_message(small);
  source.set_check_finite(true);
  auto big = [&] { source.take_matrix("big", {kLimit / 512 + 1, 512}); };
  EXPECT_EQ(testing::error_code_of(big), ErrorCode::InvalidFormat);
  EXPECT_NE(testing::error_message(big).find("'big'"), std::string::npos) << testing::error_message(big);
}

TEST(HardeningWeights, CodecWeightsAreCheckedToo) {
  TempDir dir;
  const std::string src = testing::fixture_dir("qwen3-tts-codec-decoder-tiny");
  SafetensorsFile file(src + "/model.safetensors");
  const std::string name = file.tensors().back().name;
  write_poisoned_copy(src, dir.path(), name, std::numeric_limits<float>::infinity());
  for (const bool check : {false, true}) {  // small tensors: refused with or without the opt-in
    auto load = [&] { load_codec_decoder(dir.path(), Backend::host(), check); };
    const std::string message = testing::error_message(load);
    EXPECT_EQ(testing::error_code_of(load), ErrorCode::InvalidFormat) << message;
    EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace izwi
