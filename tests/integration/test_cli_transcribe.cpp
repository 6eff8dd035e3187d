// The izwi-transcribe command line contract: whole file and streamed, JSON output, errors.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

testing::CliRun run_cli(const std::string& args) { return testing::run_example("izwi-transcribe", args); }

const std::string kModel = "--model " + testing::fixture_dir("voxtral-realtime-tiny");
const std::string kAudio = " --audio " + testing::fixture_dir("voxtral-realtime-tiny") + "/audio.wav";

TEST(CliTranscribe, JsonTokensMatchTheReferenceWholeAndStreamed) {
  const nlohmann::json expected = testing::ReferenceTensors("voxtral-realtime-tiny").ids("generated");
  for (const char* mode : {"", " --stream", " --stream --chunk-ms 37", " --stream --chunk-ms 1000"}) {
    const testing::CliRun run = run_cli(kModel + kAudio + " --pad-id 32 --delay-tokens 6 --json" + mode);
    ASSERT_EQ(run.exit_code, 0) << mode << ": " << run.err;
    const nlohmann::json line = nlohmann::json::parse(run.out);
    EXPECT_EQ(line.at("tokens"), expected) << mode;
    EXPECT_TRUE(line.at("text").is_string());
    EXPECT_NEAR(line.at("audio_seconds").get<double>(), 2.37, 0.01);
    EXPECT_GT(line.at("rtf").get<double>(), 0.0);
  }
}

TEST(CliStreamTranscribe, StreamsTheFileAndReportsTheTokens) {
  const size_t expected = testing::ReferenceTensors("voxtral-realtime-tiny").ids("generated").size();
  const testing::CliRun run =
      testing::run_example("izwi-stream-transcribe", kModel + kAudio + " --pad-id 32 --chunk-ms 37 --fast");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("[" + std::to_string(expected) + " tokens, 2.37 s of audio"), std::string::npos) << run.out;
  testing::expect_cli_errors("izwi-stream-transcribe",
                             {{kModel + " --audio /no/such.flac --pad-id 32", "/no/such.flac"}});
}

TEST(CliTranscribe, ErrorsGoToStderrWithANonZeroExit) {
  testing::TempDir dir;
  const std::string text_file = dir.write("notes.wav", "this is not audio");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kAudio, "--model is required"},
      {kModel + " --audio /no/such/file.wav --pad-id 32", "/no/such/file.wav"},
      {kModel + " --audio " + text_file + " --pad-id 32", "notes.wav"},
      {kModel + kAudio, "--pad-id is required"},  // TranscriptionOptions.pad_token_id, in the CLI's terms
      {kModel + kAudio + " --pad-id 99999", "outside the vocabulary"},
      {"--model " + testing::fixture_dir("llama-tiny") + kAudio, "'llama-tiny' is a text model: use izwi-generate"},
      {kModel + kAudio + " --pad-id 32 --stream --chunk-ms 0", "chunk-ms"},
  };
  testing::expect_cli_errors("izwi-transcribe", cases);
}

}  // namespace
}  // namespace izwi
