// The izwi-speaker-embed command line contract: the x-vector of a WAV file (at the encoder's rate
// and at another one), JSON output, errors on stderr with exit code 1.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

const char* const kFixture = "qwen3-tts-speaker-encoder-tiny";
const std::string kModel = "--model " + testing::fixture_dir(kFixture);

testing::CliRun run_cli(const std::string& args) { return testing::run_example("izwi-speaker-embed", args); }

std::vector<float> reference_waveform(const testing::ReferenceTensors& ref, int index) {
  const at::Tensor w = ref.get("case" + std::to_string(index) + ".waveform_24k").to(at::kFloat).contiguous();
  return std::vector<float>(w.data_ptr<float>(), w.data_ptr<float>() + w.numel());
}

TEST(CliSpeakerEmbed, JsonXvectorMatchesTheReference) {
  const testing::ReferenceTensors ref(kFixture);
  testing::TempDir dir;
  for (int index : {0, 1}) {
    const std::string wav = dir.file("voice" + std::to_string(index) + ".wav");
    write_wav(wav, reference_waveform(ref, index), 24000);
    const testing::CliRun run = run_cli(kModel + " --audio " + wav + " --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json line = nlohmann::json::parse(run.out);
    EXPECT_EQ(line.at("sample_rate"), 24000);
    const std::vector<float> x = line.at("xvector").get<std::vector<float>>();
    const at::Tensor expected = ref.get("case" + std::to_string(index) + ".xvector").to(at::kFloat);
    ASSERT_EQ(x.size(), static_cast<size_t>(expected.numel()));
    EXPECT_LT(testing::max_abs_diff(at::tensor(x), expected), 2e-4);
  }
}

TEST(CliSpeakerEmbed, DeviceAndDtypeAreTheEncoders) {
  // --dtype bfloat16 runs the encoder in bf16 (SpeakerEncoderParityBf16's tolerance: 0.041-0.055
  // measured on the CPU), --device cpu where it runs.
  const testing::ReferenceTensors ref(kFixture);
  testing::TempDir dir;
  const std::string wav = dir.file("voice.wav");
  write_wav(wav, reference_waveform(ref, 0), 24000);
  const at::Tensor expected = ref.get("case0.xvector").to(at::kFloat);
  double float32_diff = 0;
  for (const std::string dtype : {"float32", "bfloat16"}) {
    const testing::CliRun run = run_cli(kModel + " --audio " + wav + " --device cpu --dtype " + dtype + " --json");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<float> x = nlohmann::json::parse(run.out).at("xvector").get<std::vector<float>>();
    const double diff = testing::max_abs_diff(at::tensor(x), expected);
    if (dtype == "float32") {
      float32_diff = diff;
      EXPECT_LT(diff, 2e-4);
    } else {
      EXPECT_LT(diff, 0.15);
      EXPECT_GT(diff, float32_diff);  // bf16 did run: it rounds more than float32
    }
  }
}

TEST(CliSpeakerEmbed, OtherRatesAreResampled) {
  // The reference clip upsampled to 48 kHz comes back to 24 kHz inside the CLI.
  const testing::ReferenceTensors ref(kFixture);
  testing::TempDir dir;
  const std::string wav = dir.file("voice48k.wav");
  write_wav(wav, resample(reference_waveform(ref, 0), 24000, 48000), 48000);
  const testing::CliRun run = run_cli(kModel + " --audio " + wav + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<float> x = nlohmann::json::parse(run.out).at("xvector").get<std::vector<float>>();
  ASSERT_EQ(x.size(), 64u);
  const double diff = testing::max_abs_diff(at::tensor(x), ref.get("case0.xvector").to(at::kFloat));
  // The round trip attenuates the last few hundred Hz below 12 kHz (the resampler's passband ends
  // short of Nyquist): 0.014 measured; an unresampled file (48 kHz read as 24 kHz) is off by O(1).
  EXPECT_LT(diff, 3e-2);
}

TEST(CliSpeakerEmbed, ErrorsExitOneWithOneLine) {
  testing::TempDir dir;
  const std::string short_wav = dir.file("short.wav");
  write_wav(short_wav, std::vector<float>(2400, 0.1f), 24000);
  const std::string silent_wav = dir.file("silent.wav");
  write_wav(silent_wav, std::vector<float>(48000, 0.0f), 24000);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kModel + " --audio " + short_wav, "at least 0.5 s"},
      {kModel + " --audio " + silent_wav, "silent"},
      {kModel + " --audio " + dir.file("missing.wav"), "missing.wav"},
      {"--model " + testing::fixture_dir("qwen3-tts-tiny") + " --audio " + silent_wav, "tts_model_type"},
      {kModel, "--audio"}};
  for (const auto& [args, needle] : cases) {
    const testing::CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 1) << args;
    EXPECT_NE(run.err.find("izwi-speaker-embed: "), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(needle), std::string::npos) << args << ": " << run.err;
  }
}

}  // namespace
}  // namespace izwi
