// The WAV files the tools write: 16-bit PCM by default, 32-bit float with --float; both read back
// by libsndfile and by sox without a warning (libsndfile's own float headers, plain and
// WAVE_FORMAT_EXTENSIBLE, make sox warn "wave header missing extended part of fmt chunk").

#include <gtest/gtest.h>
#include <sndfile.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

/// stdout and stderr of `sox --i FILE`; "" when sox cannot run.
std::string sox_info(const std::string& path) {
  FILE* pipe = ::popen(("sox --i " + testing::shell_quoted(path) + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

/// libsndfile's format of the file (SF_FORMAT_WAV | SF_FORMAT_PCM_16, ...).
int sndfile_format_of(const std::string& path) {
  SF_INFO info{};
  SNDFILE* file = sf_open(path.c_str(), SFM_READ, &info);
  if (file == nullptr) return 0;
  sf_close(file);
  return info.format;
}

/// Decodes the codec fixture's codes to `wav` with izwi-codec and the given extra flags.
void decode_to(const testing::TempDir& dir, const std::string& wav, const std::string& flags) {
  const testing::ReferenceTensors ref("qwen3-tts-codec-decoder-tiny");
  const at::Tensor codes = ref.get("codes").to(at::kLong).contiguous();
  std::ofstream out(dir.file("codes.json"));
  out << "[";
  for (int64_t k = 0; k < codes.size(0); ++k) {
    out << (k ? ",[" : "[");
    for (int64_t t = 0; t < codes.size(1); ++t) out << (t ? "," : "") << codes[k][t].item<int64_t>();
    out << "]";
  }
  out << "]\n";
  out.close();
  const testing::CliRun run =
      testing::run_example("izwi-codec", "--model " + testing::fixture_dir("qwen3-tts-codec-decoder-tiny") +
                                             " --codes-file " + dir.file("codes.json") + " --out " + wav + flags);
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

TEST(CliWavOutput, SixteenBitByDefaultReadByLibsndfileAndSox) {
  testing::TempDir dir;
  const std::string wav = dir.file("out.wav");
  decode_to(dir, wav, "");
  EXPECT_EQ(sndfile_format_of(wav), SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  const AudioBuffer audio = read_audio(wav);
  EXPECT_EQ(audio.sample_rate, 24000);
  EXPECT_EQ(audio.frames(), 76800u);
  const at::Tensor expected = testing::ReferenceTensors("qwen3-tts-codec-decoder-tiny").get("waveform").to(at::kFloat);
  EXPECT_LT(testing::max_abs_diff(at::tensor(audio.samples), expected.clamp(-1, 1)), 1.0 / 32768 + 1e-4);
  const std::string sox = sox_info(wav);
  EXPECT_NE(sox.find("Precision      : 16-bit"), std::string::npos) << sox;
  EXPECT_NE(sox.find("Sample Rate    : 24000"), std::string::npos) << sox;
  EXPECT_EQ(sox.find("WARN"), std::string::npos) << sox;
}

TEST(CliWavOutput, FloatWithAHeaderThatSoxReadsWithoutAWarning) {
  testing::TempDir dir;
  const std::string wav = dir.file("out.wav");
  decode_to(dir, wav, " --float");
  EXPECT_EQ(sndfile_format_of(wav), SF_FORMAT_WAV | SF_FORMAT_FLOAT);
  const AudioBuffer audio = read_audio(wav);
  const at::Tensor expected = testing::ReferenceTensors("qwen3-tts-codec-decoder-tiny").get("waveform").to(at::kFloat);
  ASSERT_EQ(audio.frames(), 76800u);
  EXPECT_LT(testing::max_abs_diff(at::tensor(audio.samples), expected), 1e-4);
  const std::string sox = sox_info(wav);
  EXPECT_NE(sox.find("Sample Encoding: 32-bit Floating Point PCM"), std::string::npos) << sox;
  EXPECT_EQ(sox.find("WARN"), std::string::npos) << sox;
  EXPECT_EQ(sox.find("missing extended part"), std::string::npos) << sox;
}

}  // namespace
}  // namespace izwi
