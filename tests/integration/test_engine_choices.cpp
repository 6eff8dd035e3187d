// GenerationParams::n: several choices of one prompt. The prompt is computed once (the other
// choices wait for choice 0's prefill and take its blocks from the prefix cache, measured with the
// engine's prompt and prefix-hit counters); greedy choices are equal; seeded sampling gives
// choice i the stream of seed + i (choices differ, and repeat); streamed chunks carry the choice
// index and reassemble to the whole; an abort ends every choice; the cache is idle after each.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/engine_checks.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/text_model.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

constexpr int32_t kBlockSize = 4;
// Three whole blocks before the last token: each later choice finds 12 positions cached and
// computes only the last one (whose logits it samples from).
constexpr int32_t kPromptLen = 3 * kBlockSize + 1;

std::vector<int32_t> prompt_ids() {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < kPromptLen; ++i) ids.push_back(7 + 31 * i % 400);
  return ids;
}

EngineConfig small_blocks() {
  EngineConfig config;
  config.block_size = kBlockSize;
  config.num_kv_blocks = 128;
  config.max_batch_size = 8;
  return config;
}

Request choices_request(int32_t n) {
  Request r;
  r.prompt_ids = prompt_ids();
  r.params.n = n;
  r.params.max_tokens = 6;
  r.params.min_tokens = 6;
  return r;
}

class EngineChoices : public ::testing::TestWithParam<const char*> {};

// The hybrid LFM2 restores its conv state from the snapshot of the last shared block.
TEST_P(EngineChoices, GreedyChoicesAreEqualAndThePromptIsComputedOnce) {
  Engine engine(testing::fixture_dir(GetParam()), small_blocks());
  Request r = choices_request(4);
  r.params.sampling.temperature = 0.0f;
  const MetricsSnapshot before = engine.metrics();
  const Output out = engine.generate(r);
  const MetricsSnapshot after = engine.metrics();

  ASSERT_EQ(out.choices.size(), 4u);
  for (int32_t i = 0; i < 4; ++i) {
    const Output& choice = out.choices[i];
    EXPECT_EQ(choice.index, i);
    EXPECT_EQ(choice.tokens.size(), 6u);
    EXPECT_EQ(choice.tokens, out.choices[0].tokens) << "choice " << i;
    EXPECT_EQ(choice.prefix_cache_hit_tokens, i == 0 ? 0 : kPromptLen - 1) << "choice " << i;
  }
  EXPECT_EQ(out.tokens, out.choices[0].tokens);
  // Every choice is admitted with the whole prompt; all but choice 0 find kPromptLen - 1 cached:
  // the prompt is computed once, plus one position per other choice.
  EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, 4u * kPromptLen);
  const uint64_t computed =
      (after.prompt_tokens - before.prompt_tokens) - (after.prefix_cache_hit_tokens - before.prefix_cache_hit_tokens);
  EXPECT_EQ(computed, static_cast<uint64_t>(kPromptLen + 3));
  EXPECT_EQ(after.generated_tokens - before.generated_tokens, 4u * 6u);
  EXPECT_EQ(testing::check_idle(engine), "");

  // The same as one choice alone.
  Request one = choices_request(1);
  one.params.sampling.temperature = 0.0f;
  const Output alone = engine.generate(one);
  EXPECT_TRUE(alone.choices.empty());
  EXPECT_EQ(alone.tokens, out.tokens);
  EXPECT_EQ(testing::check_idle(engine), "");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EngineChoices, ::testing::Values("qwen3-tiny", "lfm2-tiny"));

TEST(EngineChoicesSampling, SeededChoicesDifferRepeatAndEachIsSeedPlusIndex) {
  Engine engine(testing::fixture_dir("qwen3-tiny"), small_blocks());
  Request r = choices_request(4);
  r.params.sampling.temperature = 1.0f;
  r.params.seed = 7;
  const Output first = engine.generate(r);
  const Output again = engine.generate(r);
  ASSERT_EQ(first.choices.size(), 4u);
  ASSERT_EQ(again.choices.size(), 4u);
  std::set<std::vector<int32_t>> distinct;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first.choices[i].tokens, again.choices[i].tokens) << "choice " << i;
    distinct.insert(first.choices[i].tokens);
  }
  EXPECT_GT(distinct.size(), 1u) << "four sampled choices of a random-weight model are not all equal";
  for (int32_t i = 0; i < 4; ++i) {
    Request alone = choices_request(1);
    alone.params.sampling.temperature = 1.0f;
    alone.params.seed = 7 + i;
    EXPECT_EQ(engine.generate(alone).tokens, first.choices[i].tokens) << "choice " << i << " is seed + " << i;
  }
  EXPECT_EQ(testing::check_idle(engine), "");
}

// The tiny Qwen3 with a tokenizer: text and logprobs per choice, streamed equal to whole.
TEST(EngineChoicesSampling, StreamedChunksCarryTheChoiceAndReassembleToTheWhole) {
  testing::TempDir dir;
  Engine engine(testing::write_text_model(dir.path()), small_blocks());
  Request r;
  r.prompt = "tell me a story about the sea and the ships on it";
  r.params.n = 3;
  r.params.max_tokens = 8;
  r.params.seed = 11;
  r.params.sampling.temperature = 1.0f;
  r.params.logprobs = 2;
  const Output whole = engine.generate(r);
  ASSERT_EQ(whole.choices.size(), 3u);

  StreamHandle handle = engine.generate_streaming(r);
  std::map<int32_t, std::vector<int32_t>> tokens;
  std::map<int32_t, std::string> text;
  std::map<int32_t, size_t> logprobs;
  std::map<int32_t, int> finished;
  while (std::optional<StreamChunk> chunk = handle.next()) {
    ASSERT_GE(chunk->index, 0);
    ASSERT_LT(chunk->index, 3);
    EXPECT_EQ(chunk->request_id, handle.id());
    EXPECT_EQ(finished[chunk->index], 0) << "a chunk of choice " << chunk->index << " after its last";
    tokens[chunk->index].insert(tokens[chunk->index].end(), chunk->tokens.begin(), chunk->tokens.end());
    text[chunk->index] += chunk->text;
    logprobs[chunk->index] += chunk->logprobs.size();
    if (chunk->finished) {
      ++finished[chunk->index];
      EXPECT_EQ(chunk->finish_reason, whole.choices[chunk->index].finish_reason);
    }
  }
  for (int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(finished[i], 1) << "choice " << i;
    EXPECT_EQ(tokens[i], whole.choices[i].tokens) << "choice " << i;
    EXPECT_EQ(text[i], whole.choices[i].text) << "choice " << i;
    EXPECT_EQ(logprobs[i], whole.choices[i].tokens.size()) << "choice " << i;
    EXPECT_EQ(whole.choices[i].logprobs.size(), whole.choices[i].tokens.size()) << "choice " << i;
  }
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineChoicesSampling, AbortEndsEveryChoiceAndBadCountsNameTheField) {
  Engine engine(testing::fixture_dir("qwen3-tiny"), small_blocks());
  Request r = choices_request(3);
  r.params.max_tokens = 200;
  r.params.min_tokens = 200;
  StreamHandle handle = engine.generate_streaming(r);
  std::map<int32_t, FinishReason> reasons;
  bool aborted = false;
  while (std::optional<StreamChunk> chunk = handle.next()) {
    if (!aborted && !chunk->tokens.empty()) {
      EXPECT_TRUE(engine.abort(handle.id()));
      aborted = true;
    }
    if (chunk->finished) reasons[chunk->index] = chunk->finish_reason;
  }
  ASSERT_EQ(reasons.size(), 3u);
  for (const auto& [index, reason] : reasons) EXPECT_EQ(reason, FinishReason::Abort) << "choice " << index;
  EXPECT_EQ(testing::check_idle(engine), "");

  for (const int32_t n : {0, kMaxChoices + 1}) {
    Request bad = choices_request(n);
    try {
      engine.generate(bad);
      ADD_FAILURE() << "n = " << n << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("GenerationParams.n"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(testing::check_idle(engine), "");
}

}  // namespace
}  // namespace izwi
