// The izwi-generate command line contract that outside checks rely on.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/tokenizer.h"

namespace izwi {
namespace {

testing::CliRun run_cli(const std::string& args) { return testing::run_example("izwi-generate", args); }

std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

TEST(CliGenerate, JsonLinesInIndexOrderMatchTheReference) {
  testing::ReferenceTensors ref("llama-tiny");
  testing::TempDir dir;
  std::string file;
  for (int c = 0; c < 7; ++c) file += join(ref.ids("case" + std::to_string(c) + ".prompt")) + "\n";
  const std::string prompts = dir.write("prompts.txt", file);
  for (const char* mode : {"", "--sequential"}) {
    const testing::CliRun run = run_cli("--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids-file " +
                                        prompts + " --max-tokens 24 --min-tokens 24 --json " + mode);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    std::istringstream lines(run.out);
    std::string line;
    int index = 0;
    while (std::getline(lines, line)) {
      const nlohmann::json j = nlohmann::json::parse(line);
      EXPECT_EQ(j.at("index").get<int>(), index);
      EXPECT_EQ(j.at("tokens").get<std::vector<int32_t>>(), ref.ids("case" + std::to_string(index) + ".generated"));
      EXPECT_EQ(j.at("finish_reason").get<std::string>(), "length");
      EXPECT_TRUE(j.at("prefix_cache_hit_tokens").is_number_integer());
      EXPECT_GE(j.at("ttft_ms").get<double>(), 0.0);
      ++index;
    }
    EXPECT_EQ(index, 7) << mode;
  }
}

TEST(CliGenerate, PromptIdsAndSamplingFlags) {
  const testing::CliRun greedy =
      run_cli("--model " + testing::fixture_dir("qwen3-tiny") + " --prompt-ids 1,2,3 --max-tokens 5 --json");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.out;
  EXPECT_EQ(nlohmann::json::parse(greedy.out).at("tokens").size(), 5u);
  const std::string sampled =
      "--model " + testing::fixture_dir("qwen3-tiny") +
      " --prompt-ids 1,2,3 --max-tokens 8 --temperature 0.8 --top-k 20 --top-p 0.9 --seed 7 --json";
  const testing::CliRun a = run_cli(sampled), b = run_cli(sampled);
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(a.out.substr(0, a.out.find("ttft")), b.out.substr(0, b.out.find("ttft")));
}

TEST(CliGenerate, TextPromptPrintsTextWhenTheFolderHasATokenizer) {
  testing::TempDir dir;
  const std::string model = "--model " + testing::write_text_model(dir.path());
  const testing::CliRun run =
      run_cli(model + " --prompt " + testing::shell_quoted("Hello, world") + " --max-tokens 12 --min-tokens 12 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json line = nlohmann::json::parse(run.out);
  const Tokenizer tokenizer = Tokenizer::from_dir(dir.path());
  const std::vector<int32_t> tokens = line.at("tokens").get<std::vector<int32_t>>();
  EXPECT_EQ(tokens.size(), 12u);
  EXPECT_EQ(line.at("text").get<std::string>(), tokenizer.decode(tokens, /*skip_special_tokens=*/true));
  // The same prompt as ids gives the same tokens.
  std::string ids;
  for (int32_t id : tokenizer.encode("Hello, world", true)) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const testing::CliRun by_ids = run_cli(model + " --prompt-ids " + ids + " --max-tokens 12 --min-tokens 12 --json");
  EXPECT_EQ(nlohmann::json::parse(by_ids.out).at("tokens"), line.at("tokens"));
  // A stop string taken from the text ends it early.
  const std::string text = line.at("text").get<std::string>();
  ASSERT_GE(text.size(), 4u);
  const std::string stop = text.substr(text.size() / 2, 2);
  const testing::CliRun stopped =
      run_cli(model + " --prompt " + testing::shell_quoted("Hello, world") +
              " --max-tokens 12 --min-tokens 12 --json --stop " + testing::shell_quoted(stop));
  EXPECT_EQ(nlohmann::json::parse(stopped.out).at("text"), text.substr(0, text.find(stop)));
  EXPECT_EQ(nlohmann::json::parse(stopped.out).at("finish_reason"), "stop");
}

// --messages renders the conversation with the folder's chat template (here Qwen3's, thinking off)
// and generates what the same prompt given as ids generates.
TEST(CliGenerate, MessagesFileIsRenderedWithTheChatTemplate) {
  testing::TempDir dir;
  const std::string folder = testing::write_text_model(dir.path());
  std::ifstream jinja(std::string(IZWI_TEST_DATA_DIR) + "/chat_templates/Qwen-Qwen3-0.6B.jinja");
  std::stringstream jinja_text;
  jinja_text << jinja.rdbuf();
  dir.write("chat_template.jinja", jinja_text.str());
  const std::string file = dir.write(
      "chat.json", R"({"messages": [{"role": "user", "content": "Hello"}], "kwargs": {"enable_thinking": false}})");
  const testing::CliRun run =
      run_cli("--model " + folder + " --messages " + file + " --max-tokens 6 --min-tokens 6 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Tokenizer tokenizer = Tokenizer::from_dir(folder);
  ChatOptions options;
  options.template_kwargs = R"({"enable_thinking": false})";
  const std::string prompt = tokenizer.apply_chat_template({{"user", "Hello"}}, options);
  EXPECT_EQ(prompt, "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  std::string ids;
  for (int32_t id : tokenizer.encode(prompt)) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const testing::CliRun by_ids =
      run_cli("--model " + folder + " --prompt-ids " + ids + " --max-tokens 6 --min-tokens 6 --json");
  ASSERT_EQ(by_ids.exit_code, 0) << by_ids.err;
  EXPECT_EQ(nlohmann::json::parse(run.out).at("tokens"), nlohmann::json::parse(by_ids.out).at("tokens"));
}

// --device and --dtype set the engine's over the defaults (a GPU's are in scripts/gpu_check.sh).
TEST(CliGenerate, DeviceAndDtypeFlagsSetTheEngine) {
  const std::string args =
      "--model " + testing::fixture_dir("llama-tiny") + " --prompt-ids 1,15,30,7 --max-tokens 4 --json";
  const testing::CliRun f32 = run_cli(args + " --device cpu --dtype float32");
  const testing::CliRun bf16 = run_cli(args + " --device cpu --dtype bfloat16");
  ASSERT_EQ(f32.exit_code, 0) << f32.err;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  EXPECT_EQ(nlohmann::json::parse(f32.out).at("tokens").size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(bf16.out).at("tokens").size(), 4u);
}

TEST(CliGenerate, ErrorsGoToStderrWithANonZeroExit) {
  const std::string model = "--model " + testing::fixture_dir("llama-tiny");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--prompt-ids 1,2", "--model is required"},
      {model, "one of --prompt-ids, --prompt-ids-file, --prompt or --messages is required"},
      {model + " --messages /no/such/file.json", "cannot open chat file"},
      {model + " --messages x.json --prompt-ids 1", "excludes"},
      {model + " --prompt hello", "needs a tokenizer"},
      {model + " --prompt-ids 1,x,3", "'x' is not a token id"},
      {model + " --prompt-ids 1,,3", "empty entry"},
      {model + " --prompt-ids 1,99999", "outside the vocabulary"},
      {model + " --prompt-ids-file /no/such/file", "cannot open prompt file"},
      {"--model /no/such/model --prompt-ids 1", "does not exist"},
      {model + " --prompt-ids 1 --top-p 2", "--top-p = 2 must be in (0, 1]"},  // params.sampling.top_p
      {model + " --prompt-ids 1 --device tpu", "device 'tpu' is not one of cpu, cuda"},
      {model + " --prompt-ids 1 --dtype float64", "--dtype is 'float64'; must be float32"},
  };
  testing::expect_cli_errors("izwi-generate", cases);
}

}  // namespace
}  // namespace izwi
