// The izwi-audio-chat command line contract: token-level prompts around the user audio give the
// released items in both modes as JSON; errors exit 1 with one line.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cli_run.h"
#include "common/reference.h"
#include "common/temp_dir.h"

namespace izwi {
namespace {

const char* const kFixture = "lfm2-audio-tiny";

std::string ids_list(const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

std::string token_level_args() {
  const testing::ReferenceTensors ref(kFixture);
  const std::vector<int32_t> ids = ref.ids("text_ids");
  return "--model " + testing::fixture_dir(kFixture) + " --audio " + testing::fixture_dir(kFixture) +
         "/audio.wav --pre-ids " + ids_list({ids.begin(), ids.begin() + 9}) + " --post-ids " +
         ids_list({ids.begin() + 9, ids.end()});
}

void expect_items(const nlohmann::json& items, const std::string& mode) {
  const testing::ReferenceTensors ref(kFixture);
  const std::vector<int32_t> kinds = ref.ids(mode + ".kinds"), text = ref.ids(mode + ".text");
  const at::Tensor frames = ref.get(mode + ".frames");
  ASSERT_EQ(items.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == 0) {
      EXPECT_EQ(items[i].at("text").get<int32_t>(), text[i]) << mode << " item " << i;
      continue;
    }
    const std::vector<int64_t> codes = items[i].at("frame").get<std::vector<int64_t>>();
    const at::Tensor row = frames[static_cast<int64_t>(i)].contiguous();
    EXPECT_EQ(codes, std::vector<int64_t>(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + 8)) << mode << i;
  }
}

TEST(CliAudioChat, TokenLevelPromptsGiveTheReleasedItems) {
  const testing::CliRun interleaved =
      testing::run_example("izwi-audio-chat", token_level_args() + " --max-new 40 --json");
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
  const nlohmann::json line = nlohmann::json::parse(interleaved.out);
  expect_items(line.at("items"), "interleaved");
  EXPECT_EQ(line.at("audio_seconds").get<double>(), 0.0);  // the tiny folder has no codec
  EXPECT_TRUE(line.at("text").is_string());
  const testing::CliRun sequential =
      testing::run_example("izwi-audio-chat", token_level_args() + " --mode sequential --max-new 12 --json");
  ASSERT_EQ(sequential.exit_code, 0) << sequential.err;
  expect_items(nlohmann::json::parse(sequential.out).at("items"), "sequential");
}

TEST(CliAudioChat, ErrorsGoToStderrWithExitCodeOne) {
  const std::string model = "--model " + testing::fixture_dir(kFixture);
  testing::expect_cli_errors("izwi-audio-chat",
                             {
                                 {"--json", "--model is required"},
                                 {token_level_args() + " --out /tmp/x.wav", "--out needs the model folder's codec"},
                                 {model + " --pre-ids 1,x", "'x' is not a token id"},
                                 {model + " --asr --tts hello", "excludes"},
                                 {model + " --pre-ids 1 --system hi", "excludes"},
                                 {model + " --asr --audio /no/such.wav", "/no/such.wav"},
                                 {model + " --asr", "pass --pre-ids and --post-ids"},
                                 {"--model /no/such/model --asr", "izwi-audio-chat: NotFound: "},
                                 {token_level_args() + " --max-new 0", "--max-tokens = 0 must be >= 1"},  // max_items
                             });
}

}  // namespace
}  // namespace izwi
