// Progress on long work: on a terminal the engine tools draw a bar while the weights load, while
// izwi-speak creates a voice and speaks, and while izwi-transcribe transcribes a file; with
// --json, or when stderr is not a terminal, they print nothing extra.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "common/cli_run.h"
#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

/// Everything a command writes to its terminal: run under script(1), which gives it a
/// pseudo-terminal for stdin, stdout and stderr.
std::string run_on_a_terminal(const std::string& command) {
  const std::string line = "script -qec " + testing::shell_quoted(command) + " /dev/null < /dev/null";
  FILE* pipe = ::popen(line.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe == nullptr) return {};
  std::string out;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  EXPECT_EQ(::pclose(pipe), 0) << out;
  return out;
}

const std::string kGenerate = std::string(IZWI_BINARY_DIR) + "/examples/izwi-generate --model " +
                              testing::fixture_dir("llama-tiny") + " --prompt-ids 1,2 --max-tokens 2";

TEST(CliProgress, ABarOnATerminalWhileTheWeightsLoad) {
  const std::string out = run_on_a_terminal(kGenerate);
  EXPECT_NE(out.find("\rloading llama-tiny ["), std::string::npos) << out;
  EXPECT_NE(out.find("] 100% "), std::string::npos) << out;
  EXPECT_NE(out.find("(length"), std::string::npos) << out;  // and the result after it
}

TEST(CliProgress, NoBarWithJsonOrWhenStderrIsNotATerminal) {
  const std::string json = run_on_a_terminal(kGenerate + " --json");
  EXPECT_EQ(json.find("loading"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tokens\""), std::string::npos) << json;
  const testing::CliRun piped = testing::run_example(
      "izwi-generate", "--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids 1,2 --max-tokens 2");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
}

/// izwi-speak cloning a voice from a recording with a Base model; the folders live in `dir`.
std::string speak_command(const testing::TempDir& dir, const testing::TempDir& model) {
  const at::Tensor reference = testing::ReferenceTensors("qwen3-tts-speaker-encoder-tiny").get("case0.waveform_24k");
  const at::Tensor samples = reference.to(at::kFloat).contiguous();
  write_wav(dir.file("ref.wav"), {samples.data_ptr<float>(), samples.data_ptr<float>() + samples.numel()}, 24000);
  std::string ids;
  for (const int32_t id : testing::ReferenceTensors("qwen3-tts-tiny").ids("case0.input_ids")) {
    ids += (ids.empty() ? "" : ",") + std::to_string(id);
  }
  return std::string(IZWI_BINARY_DIR) + "/examples/izwi-speak --model " + testing::make_qwen3_tts_base_model(model) +
         " --text-ids " + ids + " --language english --temperature 0 --max-frames 6 --voice-audio " +
         dir.file("ref.wav");
}

TEST(CliProgress, SpeakShowsTheVoiceCreationAndTheAudioSpokenOnATerminalOnly) {
  testing::TempDir dir, model;
  const std::string command = speak_command(dir, model);
  const std::string out = run_on_a_terminal(command);
  EXPECT_NE(out.find("\rcreating the voice of " + dir.file("ref.wav") + " ["), std::string::npos) << out;
  EXPECT_NE(out.find("] 100% "), std::string::npos) << out;
  EXPECT_NE(out.find("\rspeaking 0.4 s of audio"), std::string::npos) << out;  // 6 frames of 80 ms
  EXPECT_NE(out.find("6 frames"), std::string::npos) << out;                   // and the result after it

  const std::string json = run_on_a_terminal(command + " --json");
  EXPECT_EQ(json.find("creating the voice"), std::string::npos) << json;
  EXPECT_EQ(json.find("speaking"), std::string::npos) << json;
  EXPECT_NE(json.find("\"frames\":6"), std::string::npos) << json;
  const testing::CliRun piped = testing::run_built("examples/izwi-speak", command.substr(command.find(" --model")));
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
}

TEST(CliProgress, TranscribeShowsTheAudioTranscribedOnATerminalOnly) {
  const std::string dir = testing::fixture_dir("voxtral-realtime-tiny");
  const std::string args = " --model " + dir + " --audio " + dir + "/audio.wav --pad-id 32";
  const std::string command = std::string(IZWI_BINARY_DIR) + "/examples/izwi-transcribe" + args;
  const std::string out = run_on_a_terminal(command);
  const std::string bar = "\rtranscribing " + dir + "/audio.wav [";
  EXPECT_NE(out.find(bar), std::string::npos) << out;
  EXPECT_NE(out.find("] 100% 2.4/2.4 s"), std::string::npos) << out;  // the file's 2.37 s
  // Streamed, the text printed as it is decoded is the progress.
  EXPECT_EQ(run_on_a_terminal(command + " --stream").find(bar), std::string::npos);

  const std::string json = run_on_a_terminal(command + " --json");
  EXPECT_EQ(json.find("transcribing"), std::string::npos) << json;
  EXPECT_NE(json.find("\"tokens\""), std::string::npos) << json;
  const testing::CliRun piped = testing::run_example("izwi-transcribe", args);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "");
}

}  // namespace
}  // namespace izwi
