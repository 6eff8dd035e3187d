// A command line serves one run: every engine tool sizes its KV pool for its one request (its
// prompt, audio and output at most, plus 32 positions of template) instead of a server's 1024
// blocks, unless --kv-blocks or --config says otherwise. The pool each run gets is read from the
// engine's "N KV blocks of 16" info line (-v); the run succeeding shows the request fits.

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/audio.h"

namespace izwi {
namespace {

constexpr int64_t kTemplate = 32;  // positions of template the tools allow beyond text, audio and output

int64_t blocks_for(int64_t positions) { return (positions + 15) / 16; }

/// Positions of an audio file: one per 80 ms.
int64_t audio_positions(const std::string& path) {
  return static_cast<int64_t>(std::ceil(read_audio(path).seconds() / 0.08));
}

/// The KV blocks the engine of a `-v` run reports, -1 when it reports none.
int64_t pool_blocks(const testing::CliRun& run) {
  std::smatch match;
  const std::regex line("(\\d+) KV blocks of 16");
  return std::regex_search(run.err, match, line) ? std::stoll(match[1]) : -1;
}

int64_t run_and_read_pool(const std::string& tool, const std::string& args) {
  const testing::CliRun run = testing::run_example(tool, args + " -v");
  EXPECT_EQ(run.exit_code, 0) << tool << " " << args << "\n" << run.err;
  return pool_blocks(run);
}

TEST(CliKvPool, GenerateHoldsItsPrompts) {
  const std::string model = "--model " + testing::fixture_dir("llama-tiny");
  EXPECT_EQ(run_and_read_pool("izwi-generate", model + " --prompt-ids 1,2,3 --max-tokens 30"), blocks_for(33));
  EXPECT_EQ(run_and_read_pool("izwi-generate", model + " --prompt-ids 1,2 --max-tokens 2 --kv-blocks 7"), 7);
}

TEST(CliKvPool, ChatHoldsOneConversationOf4096PositionsAndItsReply) {
  testing::TempDir dir;
  const std::string model = testing::write_text_model(dir.path() + "/model");
  const std::string input = dir.write("input.txt", "Hello there\n");
  EXPECT_EQ(run_and_read_pool("izwi-chat", "--model " + model + " --max-tokens 6 --json < " + input),
            blocks_for(4096 + 6));
}

TEST(CliKvPool, SpeakHoldsItsTextAndFrames) {
  const std::string model = "--model " + testing::fixture_dir("qwen3-tts-tiny");
  const testing::ReferenceTensors ref("qwen3-tts-tiny");
  std::string ids;
  for (const int32_t id : ref.ids("case2.input_ids")) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const int64_t text = static_cast<int64_t>(ref.ids("case2.input_ids").size());
  EXPECT_EQ(run_and_read_pool("izwi-speak", model + " --text-ids " + ids +
                                                " --speaker alice --language chinese --max-tokens 8 --json"),
            blocks_for(text + 8 + kTemplate));
}

TEST(CliKvPool, TranscriptionToolsHoldTheirFile) {
  const std::string dir = testing::fixture_dir("voxtral-realtime-tiny");
  const std::string args = "--model " + dir + " --audio " + dir + "/audio.wav --pad-id 32 --json";
  const int64_t audio = audio_positions(dir + "/audio.wav");
  EXPECT_EQ(run_and_read_pool("izwi-transcribe", args), blocks_for(audio + kTemplate));
  EXPECT_EQ(run_and_read_pool("izwi-transcribe", args + " --delay-tokens 20 --continue"),
            blocks_for(audio + kTemplate + 20 + 64));  // 64: TranscriptionOptions::max_tokens_after_audio
  EXPECT_EQ(run_and_read_pool("izwi-stream-transcribe", args + " --fast"), blocks_for(audio + kTemplate));
}

TEST(CliKvPool, AudioChatHoldsItsPromptAudioAndItems) {
  const std::string dir = testing::fixture_dir("lfm2-audio-tiny");
  const testing::ReferenceTensors ref("lfm2-audio-tiny");
  const std::vector<int32_t> ids = ref.ids("text_ids");
  std::string pre, post;
  for (size_t i = 0; i < ids.size(); ++i)
    (i < 9 ? pre : post) += (i == 0 || i == 9 ? "" : ",") + std::to_string(ids[i]);
  const std::string args = "--model " + dir + " --audio " + dir + "/audio.wav --pre-ids " + pre + " --post-ids " +
                           post + " --max-new 12 --json";
  EXPECT_EQ(run_and_read_pool("izwi-audio-chat", args),
            blocks_for(audio_positions(dir + "/audio.wav") + static_cast<int64_t>(ids.size()) + 12 + kTemplate));
}

TEST(CliKvPool, ConfigThatSizesThePoolWins) {
  testing::TempDir dir;
  const std::string config = dir.write("config.json", R"({"num_kv_blocks": 40})");
  const std::string model = testing::fixture_dir("voxtral-realtime-tiny");
  EXPECT_EQ(run_and_read_pool("izwi-transcribe", "--model " + model + " --audio " + model +
                                                     "/audio.wav --pad-id 32 --json --config " + config),
            40);
}

}  // namespace
}  // namespace izwi
