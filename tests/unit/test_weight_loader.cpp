#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "io/weight_loader.h"
#include "izwi/errors.h"
#include "models/model_registry.h"

namespace izwi {
namespace {

using testing::F32Tensor;
using testing::TempDir;

using testing::error_message;

TEST(WeightLoader, TakesTensorsAndReportsMissingMismatchedAndUnexpected) {
  TempDir dir;
  dir.write("model.safetensors", testing::f32_safetensors({{"w", {2, 2}, {1, 2, 3, 4}}, {"extra", {1}, {5}}}));
  WeightLoader loader(dir.path(), at::kFloat, at::kFloat, at::kCPU);
  at::Tensor w = loader.take("w", {2, 2});
  EXPECT_EQ(w[1][0].item<float>(), 3.0f);
  EXPECT_NE(error_message([&] { loader.take("nope", {1}); }).find("required tensor 'nope' is missing"),
            std::string::npos);
  const std::string shape_error = error_message([&] { loader.take("extra", {2}); });
  EXPECT_NE(shape_error.find("tensor 'extra' has shape [1] but the config implies [2]"), std::string::npos)
      << shape_error;
  EXPECT_NE(error_message([&] { loader.finish(); }).find("unexpected tensor(s) the model does not use: extra"),
            std::string::npos);
  loader.skip("extra");
  EXPECT_EQ(error_message([&] { loader.finish(); }), "");
}

TEST(WeightLoader, ConvertsToTheComputeDtype) {
  TempDir dir;
  dir.write("model.safetensors", testing::f32_safetensors({{"w", {3}, {1.5f, -2.0f, 0.25f}}}));
  WeightLoader loader(dir.path(), at::kBFloat16, at::kBFloat16, at::kCPU);
  at::Tensor w = loader.take("w", {3});
  EXPECT_EQ(w.scalar_type(), at::kBFloat16);
  EXPECT_EQ(w[1].item<float>(), -2.0f);
}

TEST(WeightLoader, ShardedIndexErrorsNameTheFileAndTensor) {
  TempDir dir;
  dir.write("a.safetensors", testing::f32_safetensors({{"x", {1}, {1}}}));
  dir.write("model.safetensors.index.json", R"({"weight_map": {"x": "a.safetensors", "y": "a.safetensors"}})");
  const std::string missing = error_message([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); });
  EXPECT_NE(missing.find("tensor 'y' is listed for shard 'a.safetensors' but that file does not contain it"),
            std::string::npos)
      << missing;

  dir.write("model.safetensors.index.json", R"({"weight_map": {"x": "b.safetensors"}})");
  const std::string no_shard = error_message([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); });
  EXPECT_NE(no_shard.find("b.safetensors"), std::string::npos) << no_shard;

  dir.write("model.safetensors.index.json", R"({"weight_map": {"x": "../a.safetensors"}})");
  EXPECT_NE(error_message([&] {
              WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU);
            }).find("not a file in the model folder"),
            std::string::npos);

  dir.write("model.safetensors.index.json", R"({"metadata": {}})");
  EXPECT_NE(
      error_message([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); }).find("missing 'weight_map'"),
      std::string::npos);

  dir.write("model.safetensors.index.json", "{broken");
  EXPECT_NE(error_message([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); }).find("not valid JSON"),
            std::string::npos);
}

// The bf16 sharded fixture stores llama-tiny's float32 weights rounded to bf16 in five shards
// with an index: loading it must give exactly those rounded values under every name.
TEST(WeightLoader, ShardedBf16CheckpointLoadsExactly) {
  WeightLoader f32(testing::fixture_dir("llama-tiny"), at::kFloat, at::kFloat, at::kCPU);
  WeightLoader bf16(testing::fixture_dir("llama-tiny-bf16-sharded"), at::kFloat, at::kFloat, at::kCPU);
  SafetensorsFile file(testing::fixture_dir("llama-tiny") + "/model.safetensors");
  for (const StTensorInfo& info : file.tensors()) {
    at::Tensor expected = f32.take(info.name, info.shape).to(at::kBFloat16).to(at::kFloat);
    at::Tensor got = bf16.take(info.name, info.shape);
    EXPECT_TRUE(at::equal(got, expected)) << info.name;
  }
  EXPECT_NO_THROW(bf16.finish());
}

TEST(WeightLoader, TheBackendDecidesWhetherLinearWeightsArePacked) {
  WeightLoader loader(testing::fixture_dir("llama-tiny"), at::kFloat, at::kFloat, at::kCPU);
  EXPECT_EQ(loader.cpu_kernels(), nullptr) << "no backend set: nothing packed";
  EXPECT_EQ(&loader.backend(), &Backend::host()) << "a source built from dtypes alone runs on the host";
  const Backend torch = Backend::reference(at::kCPU, at::kFloat);
  loader.set_backend(torch);
  EXPECT_EQ(loader.cpu_kernels(), nullptr) << "libtorch's products take row-major weights";
  EXPECT_EQ(&loader.backend(), &torch);
  loader.set_backend(Backend::host());
  EXPECT_EQ(loader.cpu_kernels(), Backend::host().panel_kernels());
  ASSERT_NE(loader.cpu_kernels(), nullptr);

  WeightLoader bf16(testing::fixture_dir("llama-tiny"), at::kBFloat16, at::kBFloat16, at::kCPU);
  EXPECT_THROW(bf16.set_backend(Backend::host()), Error) << "a backend of another compute dtype than the source's";
}

TEST(WeightLoader, FolderWithoutWeightsIsNotFound) {
  TempDir dir;
  try {
    WeightLoader loader(dir.path(), at::kFloat, at::kFloat, at::kCPU);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
  }
}

// A copy of llama-tiny with one file replaced, for model-level loading errors.
class BrokenModel {
 public:
  BrokenModel() {
    for (const char* f : {"config.json", "model.safetensors"}) {
      std::filesystem::copy_file(testing::fixture_dir("llama-tiny") + "/" + f, dir_.file(f));
    }
  }
  const TempDir& dir() const { return dir_; }
  std::string load_error() {
    return error_message([&] { load_causal_lm(dir_.path(), std::make_shared<const Backend>(Backend::host())); });
  }

 private:
  TempDir dir_;
};

TEST(ModelLoading, ConfigAndWeightProblemsAreNamed) {
  {
    BrokenModel m;
    m.dir().write("config.json", R"({"model_type": "gpt9"})");
    EXPECT_NE(m.load_error().find("model_type 'gpt9' is not supported"), std::string::npos);
  }
  {
    BrokenModel m;
    m.dir().write("config.json", R"({"model_type": "llama", "hidden_size": "64"})");
    const std::string e = m.load_error();
    EXPECT_NE(e.find("vocab_size"), std::string::npos) << e;  // first required field missing
  }
  {
    BrokenModel m;
    std::ifstream in(m.dir().file("config.json"));
    std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    config.replace(config.find("\"hidden_size\": 64"), 17, "\"hidden_size\": 32");
    m.dir().write("config.json", config);
    const std::string e = m.load_error();
    EXPECT_NE(e.find("model.embed_tokens.weight' has shape [512, 64] but the config implies [512, 32]"),
              std::string::npos)
        << e;
  }
  {
    BrokenModel m;
    std::ifstream in(m.dir().file("config.json"));
    std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    config.replace(config.find("\"llama3\""), 8, "\"yarn\"");
    m.dir().write("config.json", config);
    EXPECT_NE(m.load_error().find("rope_type 'yarn' is not supported"), std::string::npos);
  }
  {
    BrokenModel m;
    std::ifstream in(m.dir().file("model.safetensors"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    m.dir().write("model.safetensors", bytes.substr(0, bytes.size() - 100));
    const std::string e = m.load_error();
    EXPECT_NE(e.find("model.safetensors"), std::string::npos);
    EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  }
  {
    BrokenModel m;
    m.dir().write("config.json", "{not json");
    EXPECT_NE(m.load_error().find("config.json' is not valid JSON"), std::string::npos);
  }
  EXPECT_NE(error_message([] {
              load_causal_lm("/no/such/model", std::make_shared<const Backend>(Backend::host()));
            }).find("does not exist"),
            std::string::npos);
}

}  // namespace
}  // namespace izwi
