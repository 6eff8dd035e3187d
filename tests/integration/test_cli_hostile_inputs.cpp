// Hostile inputs to the command lines: each must end in one typed error line naming the input and
// exit code 1, never in a garbage result with exit code 0.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cli_run.h"
#include "common/float_wav.h"
#include "common/reference.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

// A WAV of 1e30 samples is finite, so it used to pass the reader; the speaker encoder's log-mel
// squared it to Inf and the CLI printed an x-vector of nulls with exit code 0.
TEST(CliHostileInputs, SpeakerEmbedRefusesHugeSamplesNamingTheFile) {
  testing::TempDir dir;
  const std::string wav = dir.write("loud.wav", testing::float_wav_bytes(std::vector<float>(24000, 1e30f), 24000));
  const testing::CliRun run =
      testing::run_example("izwi-speaker-embed", "--model " + testing::fixture_dir("qwen3-tts-speaker-encoder-tiny") +
                                                     " --audio " + wav + " --json");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err.rfind("izwi-speaker-embed: InvalidFormat: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find("audio file '" + wav + "' holds an unusable sample at frame 0: 1e+30"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace izwi
