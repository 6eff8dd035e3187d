// The izwi-codec command line contract: whole and streamed decode, JSON and WAV output, Mimi
// encode and decode with a chosen number of codebooks, errors.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

const char* const kFixture = "qwen3-tts-codec-decoder-tiny";
const std::string kModel = "--model " + testing::fixture_dir(kFixture);

testing::CliRun run_cli(const std::string& args) { return testing::run_example("izwi-codec", args); }

/// Writes the fixture's codes as a [codebooks][frames] JSON file in `dir`.
std::string write_codes(const testing::TempDir& dir, const at::Tensor& codes) {
  const at::Tensor c = codes.to(at::kLong).contiguous();
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t k = 0; k < c.size(0); ++k) {
    std::vector<int64_t> row(c[k].data_ptr<int64_t>(), c[k].data_ptr<int64_t>() + c.size(1));
    rows.push_back(row);
  }
  return dir.write("codes.json", rows.dump());
}

TEST(CliCodec, JsonSamplesMatchTheReferenceWholeAndStreamed) {
  const testing::ReferenceTensors ref(kFixture);
  const at::Tensor expected = ref.get("waveform").to(at::kFloat);
  testing::TempDir dir;
  const std::string codes = " --codes-file " + write_codes(dir, ref.get("codes"));
  for (const char* mode : {"", " --chunk-frames 1", " --chunk-frames 7", " --chunk-frames 100"}) {
    const testing::CliRun run = run_cli(kModel + codes + " --json" + mode);
    ASSERT_EQ(run.exit_code, 0) << mode << ": " << run.err;
    const nlohmann::json line = nlohmann::json::parse(run.out);
    EXPECT_EQ(line.at("sample_rate"), 24000);
    const std::vector<float> samples = line.at("samples").get<std::vector<float>>();
    ASSERT_EQ(samples.size(), static_cast<size_t>(expected.numel())) << mode;
    EXPECT_LT(testing::max_abs_diff(at::tensor(samples), expected), 1e-4) << mode;
  }
}

TEST(CliCodec, WritesAFloatWav) {
  const testing::ReferenceTensors ref(kFixture);
  testing::TempDir dir;
  const std::string wav = dir.file("out.wav");
  const testing::CliRun run =
      run_cli(kModel + " --codes-file " + write_codes(dir, ref.get("codes")) + " --out " + wav + " --float");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("40 frames -> 76800 samples"), std::string::npos) << run.out;
  const AudioBuffer audio = read_audio(wav);
  EXPECT_EQ(audio.sample_rate, 24000);
  EXPECT_EQ(audio.channels, 1);
  ASSERT_EQ(audio.samples.size(), 76800u);
  EXPECT_LT(testing::max_abs_diff(at::tensor(audio.samples), ref.get("waveform").to(at::kFloat)), 1e-4);
}

TEST(CliCodec, ErrorsGoToStderrWithExitCodeOne) {
  const testing::ReferenceTensors ref(kFixture);
  testing::TempDir dir;
  const std::string good = write_codes(dir, ref.get("codes"));
  at::Tensor bad_codes = ref.get("codes").clone();
  bad_codes[2][5] = 2048;
  testing::TempDir bad_dir;
  const std::string bad = write_codes(bad_dir, bad_codes);
  const std::string not_json = dir.write("notes.json", "[[1, 2], [3");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--codes-file " + good, "--model is required"},
      {kModel, "--codes-file or --encode is required"},
      {kModel + " --codes-file " + good + " --encode x.wav", "excludes"},
      {"--model " + testing::fixture_dir("mimi-tiny") + " --encode /no/such/audio.wav", "/no/such/audio.wav"},
      {kModel + " --encode /no/such/audio.wav", "holds a decoder only"},
      {kModel + " --codes-file " + good + " --codes-out x.json", "requires --encode"},
      {kModel + " --codes-file " + good + " --chunk-frames 0", "chunk-frames"},
      {kModel + " --codes-file " + good + " --threads -1", "threads"},
      {kModel + " --codes-file " + good + " --threads two", "threads"},
      {kModel + " --codes-file " + good + " --bogus", "bogus"},
      {"--model /no/such/codec --codes-file " + good, "izwi-codec: NotFound: "},
      {kModel + " --codes-file /no/such/codes.json", "/no/such/codes.json"},
      {kModel + " --codes-file " + not_json, "notes.json"},
      {kModel + " --codes-file " + bad, "codebook 2, frame 5: code 2048"},
      {kModel + " --codes-file " + bad + " --chunk-frames 3", "stream 0: codebook 2, frame 5: code 2048"},
  };
  for (const auto& [args, expected] : cases) {
    const testing::CliRun run = run_cli(args);
    EXPECT_EQ(run.exit_code, 1) << args;
    EXPECT_NE(run.err.find("izwi-codec: "), std::string::npos) << args << ": " << run.err;
    EXPECT_NE(run.err.find(expected), std::string::npos) << args << " printed: " << run.err;
  }
}

const std::string kMimi = "--model " + testing::fixture_dir("mimi-tiny");

TEST(CliCodec, MimiEncodesAudioToTheReferenceCodesAndDecodesThem) {
  const testing::ReferenceTensors ref("mimi-tiny");
  testing::TempDir dir;
  const std::string codes_out = dir.file("codes.json");
  const std::string audio = testing::fixture_dir("mimi-tiny") + "/audio.wav";
  const testing::CliRun encoded = run_cli(kMimi + " --encode " + audio + " --codes-out " + codes_out + " --json");
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  const nlohmann::json printed = nlohmann::json::parse(encoded.out).at("codes");
  const at::Tensor expected = ref.get("encoded_codes");
  ASSERT_EQ(printed.size(), 8u);
  for (int64_t k = 0; k < 8; ++k) {
    EXPECT_EQ(
        printed[k].get<std::vector<int64_t>>(),
        std::vector<int64_t>(expected[k].data_ptr<int64_t>(), expected[k].data_ptr<int64_t>() + expected.size(1)));
  }
  const testing::CliRun three = run_cli(kMimi + " --encode " + audio + " --num-codebooks 3");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_NE(three.out.find("24000 samples -> 13 frames x 3 codebooks"), std::string::npos) << three.out;

  // The reference codes decode to the reference audio, whole and streamed.
  const std::string codes = " --codes-file " + write_codes(dir, ref.get("codes"));
  for (const char* mode : {"", " --chunk-frames 2"}) {
    const testing::CliRun run = run_cli(kMimi + codes + " --json" + mode);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::vector<float> samples = nlohmann::json::parse(run.out).at("samples").get<std::vector<float>>();
    EXPECT_LT(testing::max_abs_diff(at::tensor(samples), ref.get("decoded_audio").to(at::kFloat)), 1e-4) << mode;
  }
  // The encoder's own codes decode with as many codebooks as they have.
  const testing::CliRun four = run_cli(kMimi + " --encode " + audio + " --num-codebooks 4 --codes-out " + codes_out);
  ASSERT_EQ(four.exit_code, 0) << four.err;
  const testing::CliRun decoded = run_cli(kMimi + " --codes-file " + codes_out + " --num-codebooks 4");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_NE(decoded.out.find("13 frames -> 24960 samples"), std::string::npos) << decoded.out;
  const testing::CliRun too_many = run_cli(kMimi + " --encode " + audio + " --num-codebooks 9");
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_NE(too_many.err.find("num_codebooks 9"), std::string::npos) << too_many.err;
}

}  // namespace
}  // namespace izwi
