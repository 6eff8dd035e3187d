// One set of options on every izwi tool: each --help lists the shared options under the same
// group headings ("Model", "Engine", "Sampling", "Output"), and the options behave the same way.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cli_run.h"
#include "common/reference.h"

namespace izwi {
namespace {

/// The shared options under each heading, as common/shared_options.cpp declares them.
const std::vector<std::string> kModel = {"--model"};
const std::vector<std::string> kEngine = {"--config",       "--device",    "--dtype",
                                          "--weight-dtype", "--kv-blocks", "--threads"};
const std::vector<std::string> kSampling = {"--temperature", "--top-k", "--top-p", "--repetition-penalty", "--seed"};
const std::vector<std::string> kOutput = {"--json", "-v,--verbose", "-q,--quiet"};

struct Tool {
  std::string path;  ///< Under the build folder.
  bool engine;       ///< Model, Engine, Sampling (with --max-tokens) and Output.
  bool max_tokens;
  std::vector<std::string> extra_engine;  ///< Engine-group options of a tool that builds its own config.
};

std::vector<Tool> tools() {
  return {
      {"examples/izwi-generate", true, true, {}},
      {"examples/izwi-chat", true, true, {}},
      {"examples/izwi-speak", true, true, {}},
      {"examples/izwi-audio-chat", true, true, {}},
      {"examples/izwi-transcribe", true, false, {}},
      {"examples/izwi-stream-transcribe", true, false, {}},
      {"examples/izwi-codec", false, false, {"--threads"}},
      {"examples/izwi-speaker-embed", false, false, {"--device", "--dtype", "--weight-dtype", "--threads"}},
      {"examples/izwi-tokenize", false, false, {}},
      {"benchmarks/izwi-bench", false, false, {"--device", "--dtype", "--weight-dtype", "--threads"}},
      {"benchmarks/izwi-tts-bench", false, false, {"--threads"}},
      {"benchmarks/izwi-audio-chat-bench", false, false, {"--threads"}},
      {"benchmarks/izwi-asr-bench", false, false, {"--threads"}},
      {"benchmarks/izwi-voice-bench", false, false, {"--threads"}},
  };
}

/// The text of `help` under `heading` ("Model:"), up to the next heading.
std::string section(const std::string& help, const std::string& heading) {
  const size_t start = help.find("\n" + heading + ":\n");
  if (start == std::string::npos) return {};
  size_t end = start + heading.size() + 3;
  // A heading is a line that starts without indentation and ends with ':'.
  while (end < help.size()) {
    const size_t next = help.find('\n', end);
    const std::string line = help.substr(end, next == std::string::npos ? std::string::npos : next - end);
    if (!line.empty() && line[0] != ' ' && line.back() == ':') break;
    if (next == std::string::npos) return help.substr(start);
    end = next + 1;
  }
  return help.substr(start, end - start);
}

void expect_in(const std::string& help, const std::string& heading, const std::vector<std::string>& options,
               const std::string& tool) {
  const std::string text = section(help, heading);
  ASSERT_FALSE(text.empty()) << tool << " --help has no " << heading << " group:\n" << help;
  for (const std::string& option : options) {
    const bool listed = text.find("  " + option + " ") != std::string::npos ||
                        text.find("  " + option + ",") != std::string::npos;  // followed by another name
    EXPECT_TRUE(listed) << tool << ": " << option << " not under " << heading << ":\n" << text;
  }
}

TEST(CliSharedOptions, EveryToolsHelpGroupsTheSharedOptionsTheSameWay) {
  for (const Tool& tool : tools()) {
    const testing::CliRun run = testing::run_built(tool.path, "--help");
    ASSERT_EQ(run.exit_code, 0) << tool.path << ": " << run.err;
    expect_in(run.out, "Model", kModel, tool.path);
    expect_in(run.out, "Output", kOutput, tool.path);
    if (tool.engine) {
      expect_in(run.out, "Engine", kEngine, tool.path);
      expect_in(run.out, "Sampling", kSampling, tool.path);
      if (tool.max_tokens) expect_in(run.out, "Sampling", {"--max-tokens"}, tool.path);
    } else {
      EXPECT_EQ(section(run.out, "Sampling"), "") << tool.path << " has no sampling to set";
      if (!tool.extra_engine.empty()) expect_in(run.out, "Engine", tool.extra_engine, tool.path);
    }
  }
}

TEST(CliSharedOptions, OldNamesStayAliases) {
  const struct {
    std::string path, alias;
  } cases[] = {{"examples/izwi-tokenize", "--model,--tokenizer"},
               {"examples/izwi-speak", "--max-tokens,--max-frames"},
               {"examples/izwi-audio-chat", "--max-tokens,--max-new"}};
  for (const auto& c : cases) {
    const testing::CliRun run = testing::run_built(c.path, "--help");
    EXPECT_NE(run.out.find(c.alias), std::string::npos) << c.path << ":\n" << run.out;
  }
}

TEST(CliSharedOptions, VerboseLogsTheEngineAndQuietDoesNot) {
  const std::string args = "--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids 1,2 --max-tokens 2";
  const testing::CliRun verbose = testing::run_example("izwi-generate", args + " -v");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_NE(verbose.err.find("engine ready"), std::string::npos) << verbose.err;  // an info line
  const testing::CliRun quiet = testing::run_example("izwi-generate", args + " -q");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(CliSharedOptions, EngineFlagsReachTheEngineConfig) {
  const std::string model = "--model " + testing::fixture_dir("llama-tiny");
  testing::expect_cli_errors("izwi-generate", {{model + " --prompt-ids 1 --device tpu", "--device 'tpu'"},
                                               {model + " --prompt-ids 1 --dtype int8", "int8"},
                                               {model + " --prompt-ids 1 --threads 5000", "--threads"},
                                               {model + " --prompt-ids 1 --kv-blocks 0", "--kv-blocks"},
                                               {model + " --prompt-ids 1 --config /no/such.json", "/no/such.json"}});
  // The audio is read first (its length sizes the KV pool), so it is a real file here.
  const std::string asr = testing::fixture_dir("voxtral-realtime-tiny");
  testing::expect_cli_errors("izwi-transcribe",
                             {{"--model " + asr + " --audio " + asr + "/audio.wav --device tpu", "--device 'tpu'"}});
}

}  // namespace
}  // namespace izwi
