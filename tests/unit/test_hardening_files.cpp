// Non-regular files (FIFOs, folders) where a model folder should hold regular files: each must be
// a typed error naming the file, promptly. A regression would block in open(); the guard below
// fails the test and unblocks the reader instead of hanging the suite.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "common/json_fields.h"
#include "common/temp_dir.h"
#include "io/hf_config.h"
#include "io/weight_loader.h"
#include "izwi/audio.h"
#include "izwi/config.h"
#include "izwi/errors.h"

namespace izwi {
namespace {

using testing::TempDir;

struct Outcome {
  std::optional<ErrorCode> code;
  std::string message;
};

// Runs `fn` on a thread; if it has not returned within a few seconds, fails the test and opens
// every FIFO in `fifos` for writing (then closes it) so a reader stuck in open() sees EOF.
Outcome run_guarded(const std::function<void()>& fn, const std::vector<std::string>& fifos) {
  auto future = std::async(std::launch::async, [fn] {
    Outcome o;
    try {
      fn();
    } catch (const Error& e) {
      o.code = e.code();
      o.message = e.what();
    } catch (const std::exception& e) {
      o.message = std::string("untyped exception: ") + e.what();
    }
    return o;
  });
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "reading blocked on a FIFO";
    while (future.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      for (const auto& fifo : fifos) {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0) ::close(fd);
      }
    }
  }
  return future.get();
}

std::string make_fifo(const TempDir& dir, const std::string& name) {
  const std::string path = dir.file(name);
  if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  return path;
}

void expect_not_regular(const Outcome& o, const std::string& name) {
  ASSERT_TRUE(o.code.has_value()) << o.message;
  EXPECT_EQ(*o.code, ErrorCode::InvalidFormat) << o.message;
  EXPECT_NE(o.message.find(name), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("not a regular file"), std::string::npos) << o.message;
}

TEST(HardeningFiles, FifoConfigJsonIsInvalidFormat) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "config.json");
  expect_not_regular(run_guarded([&] { HfConfig::load(dir.path()); }, {fifo}), "config.json");
}

TEST(HardeningFiles, FolderConfigJsonIsInvalidFormat) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("config.json"));
  expect_not_regular(run_guarded([&] { HfConfig::load(dir.path()); }, {}), "config.json");
}

TEST(HardeningFiles, FifoGenerationConfigIsInvalidFormat) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "generation_config.json");
  expect_not_regular(run_guarded([&] { read_json_file(fifo); }, {fifo}), "generation_config.json");
}

TEST(HardeningFiles, FifoEngineConfigFileIsInvalidFormat) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "engine.json");
  expect_not_regular(run_guarded([&] { EngineConfig::from_json_file(fifo); }, {fifo}), "engine.json");
}

TEST(HardeningFiles, FifoSafetensorsIsInvalidFormat) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "model.safetensors");
  expect_not_regular(run_guarded([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); }, {fifo}),
                     "model.safetensors");
}

TEST(HardeningFiles, FifoIndexIsInvalidFormat) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "model.safetensors.index.json");
  expect_not_regular(run_guarded([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); }, {fifo}),
                     "model.safetensors.index.json");
}

TEST(HardeningFiles, FifoShardIsInvalidFormat) {
  TempDir dir;
  dir.write("model.safetensors.index.json", R"({"weight_map": {"w": "model-00001-of-00001.safetensors"}})");
  const std::string fifo = make_fifo(dir, "model-00001-of-00001.safetensors");
  expect_not_regular(run_guarded([&] { WeightLoader(dir.path(), at::kFloat, at::kFloat, at::kCPU); }, {fifo}),
                     "model-00001-of-00001.safetensors");
}

TEST(HardeningFiles, FifoAudioFileIsATypedError) {
  TempDir dir;
  const std::string fifo = make_fifo(dir, "speech.wav");
  const Outcome o = run_guarded([&] { read_audio(fifo); }, {fifo});
  ASSERT_TRUE(o.code.has_value()) << o.message;
  EXPECT_NE(o.message.find("speech.wav"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace izwi
