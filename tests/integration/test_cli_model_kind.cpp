// The wrong kind of model and bad --model paths: every tool stops at load with exit code 1 and a
// message that says what the folder is and which tool (or izwi-server route) serves it, or what
// is wrong with the path, before it writes anything.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

std::string model(const std::string& fixture) { return "--model " + testing::fixture_dir(fixture); }

const std::string kAudio = " --audio " + testing::fixture_dir("voxtral-realtime-tiny") + "/audio.wav";

struct Case {
  std::string tool;      ///< examples/<tool>
  std::string args;      ///< What the tool needs besides --model
  std::string fixture;   ///< The wrong model
  std::string expected;  ///< In stderr
};

void expect_refused(const Case& c) {
  const testing::CliRun run = testing::run_example(c.tool, model(c.fixture) + c.args);
  EXPECT_EQ(run.exit_code, 1) << c.tool << " " << c.fixture << ": " << run.err;
  EXPECT_EQ(run.err.rfind(c.tool + ": ", 0), 0u) << c.tool << " printed: " << run.err;
  EXPECT_NE(run.err.find(c.expected), std::string::npos) << c.tool << " " << c.fixture << " printed: " << run.err;
  EXPECT_EQ(run.err.find("check '"), std::string::npos) << "an internal check, not a user error: " << run.err;
}

TEST(CliModelKind, EachEngineToolNamesTheToolThatServesTheModel) {
  const std::string tts = "'qwen3-tts-tiny' is a text-to-speech model: use izwi-speak (or /v1/audio/speech)";
  const std::string text = "'llama-tiny' is a text model: use izwi-generate or izwi-chat";
  const std::string asr = "'voxtral-realtime-tiny' is a speech recognition model: use izwi-transcribe";
  for (const Case& c : std::vector<Case>{
           {"izwi-generate", " --prompt-ids 1,2", "qwen3-tts-tiny", tts},
           {"izwi-generate", " --prompt-ids 1,2", "voxtral-realtime-tiny", asr},
           {"izwi-chat", " < /dev/null", "qwen3-tts-tiny", tts},
           {"izwi-speak", " --text-ids 1,2,3", "llama-tiny", text},
           {"izwi-speak", " --text-ids 1,2,3", "lfm2-audio-tiny", "'lfm2-audio-tiny' is an audio chat model"},
           {"izwi-transcribe", kAudio, "llama-tiny", text},
           {"izwi-transcribe", kAudio, "qwen3-tts-tiny", tts},
           {"izwi-transcribe", kAudio, "lfm2-audio-tiny", "use izwi-audio-chat"},
           {"izwi-stream-transcribe", kAudio + " --fast", "qwen3-tts-tiny", tts},
           {"izwi-audio-chat", kAudio, "llama-tiny", text},
           {"izwi-audio-chat", kAudio, "voxtral-realtime-tiny", asr},
       }) {
    expect_refused(c);
  }
}

TEST(CliModelKind, ToolsWithoutAnEngineSayWhatTheyNeed) {
  for (const Case& c : std::vector<Case>{
           {"izwi-speaker-embed", kAudio, "llama-tiny", "only Qwen3-TTS Base models have a speaker encoder"},
           {"izwi-codec", " --encode " + testing::fixture_dir("voxtral-realtime-tiny") + "/audio.wav", "llama-tiny",
            "not a codec config"},
           {"izwi-tokenize", " --text hi", "qwen3-tts-tiny", "has neither tekken.json nor tokenizer.json"},
       }) {
    expect_refused(c);
  }
}

// izwi-speak used to create the WAV before it knew the model could not speak ("sample_rate 0").
TEST(CliModelKind, SpeakRefusesATextModelBeforeWritingTheWav) {
  testing::TempDir dir;
  const std::string wav = dir.file("x.wav");
  const testing::CliRun run =
      testing::run_example("izwi-speak", model("llama-tiny") + " --text-ids 1,2,3 --out " + wav);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("is a text model: use izwi-generate"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(wav));
}

TEST(CliModelKind, BadModelPathsAreNamedForEveryTool) {
  const std::string config = testing::fixture_dir("llama-tiny") + "/config.json";
  const std::string no_config = testing::fixture_dir("llama-tiny") + "/..";  // tests/data: no config.json
  const struct {
    std::string tool, args;
  } tools[] = {{"izwi-generate", " --prompt-ids 1"}, {"izwi-chat", " < /dev/null"},
               {"izwi-speak", " --text-ids 1,2,3"},  {"izwi-transcribe", kAudio},
               {"izwi-stream-transcribe", kAudio},   {"izwi-audio-chat", kAudio},
               {"izwi-speaker-embed", kAudio},       {"izwi-tokenize", " --text hi"}};
  for (const auto& t : tools) {
    testing::expect_cli_errors(
        t.tool, {{"--model " + config + t.args, "--model '" + config + "' is a file; give the model's folder"},
                 {"--model /no/such/folder" + t.args, "--model '/no/such/folder' does not exist"}});
    if (t.tool != "izwi-tokenize") {
      testing::expect_cli_errors(t.tool, {{"--model " + no_config + t.args, "has no config.json: not a model folder"}});
    }
  }
}

}  // namespace
}  // namespace izwi
