// The command-line error contract for argument parsing: every example and benchmark binary
// reports a bad command line as "<program>: <message>" on stderr and exits with exactly 1
// (CLI11's own codes, 104-114, are not part of the contract); --help still exits 0.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/cli_run.h"
#include "common/reference.h"

namespace izwi {
namespace {

struct Binary {
  std::string path;     ///< Under the build folder.
  std::string program;  ///< The name stderr lines start with.
  std::string valid;    ///< Arguments that satisfy the required options.
  std::string missing;  ///< The required option that is left out.
};

std::vector<Binary> binaries() {
  const std::string llama = testing::fixture_dir("llama-tiny");
  const std::string voxtral = testing::fixture_dir("voxtral-realtime-tiny");
  return {
      {"examples/izwi-generate", "izwi-generate", "--model " + llama, "--model"},
      {"examples/izwi-transcribe", "izwi-transcribe", "--model " + voxtral + " --audio " + voxtral + "/audio.wav",
       "--model"},
      {"examples/izwi-stream-transcribe", "izwi-stream-transcribe",
       "--model " + voxtral + " --audio " + voxtral + "/audio.wav", "--model"},
      {"examples/izwi-tokenize", "izwi-tokenize", "--tokenizer " + llama, "--model"},
      {"examples/izwi-chat", "izwi-chat", "--model " + llama, "--model"},
      {"benchmarks/izwi-bench", "izwi-bench", "--model " + llama, "--model"},
      {"benchmarks/izwi-asr-bench", "izwi-asr-bench", "--model " + voxtral, "--model"},
      {"benchmarks/izwi-make-checkpoint", "izwi-make-checkpoint", "--arch llama --preset tiny --out /tmp/x", "--arch"},
  };
}

TEST(CliErrors, UnknownFlagExitsWithOne) {
  for (const Binary& b : binaries()) {
    const testing::CliRun run = testing::run_built(b.path, b.valid + " --no-such-flag");
    EXPECT_EQ(run.exit_code, 1) << b.path << ": " << run.err;
    EXPECT_EQ(run.err.rfind(b.program + ": ", 0), 0u) << b.path << " printed: " << run.err;
    EXPECT_NE(run.err.find("--no-such-flag"), std::string::npos) << b.path << " printed: " << run.err;
  }
}

TEST(CliErrors, MissingRequiredFlagExitsWithOne) {
  for (const Binary& b : binaries()) {
    const testing::CliRun run = testing::run_built(b.path, "");
    EXPECT_EQ(run.exit_code, 1) << b.path << ": " << run.err;
    EXPECT_EQ(run.err.rfind(b.program + ": ", 0), 0u) << b.path << " printed: " << run.err;
    EXPECT_NE(run.err.find(b.missing), std::string::npos) << b.path << " printed: " << run.err;
  }
}

TEST(CliErrors, BadOptionValueExitsWithOne) {
  const testing::CliRun run =
      testing::run_built("examples/izwi-generate", "--model " + testing::fixture_dir("llama-tiny") + " --max-tokens x");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.err.rfind("izwi-generate: ", 0), 0u) << run.err;
}

TEST(CliErrors, HelpStillExitsWithZero) {
  for (const Binary& b : binaries()) {
    const testing::CliRun run = testing::run_built(b.path, "--help");
    EXPECT_EQ(run.exit_code, 0) << b.path << ": " << run.err;
    EXPECT_NE(run.out.find("--help"), std::string::npos) << b.path << " printed: " << run.out;
  }
}

// izwi-asr-bench runs one thread per stream: an error in one must reach the contract, not abort.
TEST(CliErrors, AsrBenchReportsPerStreamErrors) {
  const std::string voxtral = testing::fixture_dir("voxtral-realtime-tiny");
  struct Case {
    std::string args, expected;
  };
  for (const Case& c : std::vector<Case>{
           {"--model " + testing::fixture_dir("llama-tiny") + " --streams 1,2 --seconds 0.5",
            "'llama-tiny' is a text model: use izwi-generate"},
           {"--model " + voxtral + " --pad-id 99999 --streams 2 --seconds 0.5", "99999"},
       }) {
    const testing::CliRun run = testing::run_built("benchmarks/izwi-asr-bench", c.args);
    EXPECT_EQ(run.exit_code, 1) << c.args << ": " << run.err;
    EXPECT_EQ(run.err.rfind("izwi-asr-bench: ", 0), 0u) << c.args << " printed: " << run.err;
    EXPECT_NE(run.err.find(c.expected), std::string::npos) << c.args << " printed: " << run.err;
  }
}

}  // namespace
}  // namespace izwi
