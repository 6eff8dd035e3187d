// Findings of the hostile review ("Hardening"): each misuse ends in a typed izwi::Error or in
// safe behaviour, within bounded time and memory, never in a crash or a hang.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "common/cli_run.h"
#include "common/engine_checks.h"
#include "common/reference.h"
#include "engine/engine_impl.h"
#include "izwi/audio.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using namespace std::chrono_literals;
using detail::EngineImpl;

Request text_request(int32_t max_tokens) {
  Request r;
  r.prompt_ids = {1, 15, 30, 42};
  r.params.max_tokens = max_tokens;
  r.params.min_tokens = max_tokens;
  return r;
}

// A deadlock must fail the test, not hang the suite: give up on the whole process.
template <typename T>
void wait_or_die(std::future<T>& future, const char* what) {
  if (future.wait_for(120s) != std::future_status::ready) {
    std::fprintf(stderr, "%s: still waiting after 120 s (deadlock)\n", what);
    std::_Exit(1);
  }
}

// Finding 1: a blocking call from a stream callback waited for the worker that runs the callback.
TEST(EngineHardening, BlockingCallsInsideACallbackThrowInsteadOfDeadlocking) {
  Engine engine(testing::fixture_dir("llama-tiny"));
  struct Seen {
    std::vector<ErrorCode> codes;
    std::vector<std::string> messages;
    std::string nested_id;
  } seen;
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  bool first = true;
  engine.generate_streaming(text_request(4), [&](const StreamChunk& chunk) {
    if (first) {
      first = false;
      const auto expect_error = [&](const std::function<void()>& call) {
        try {
          call();
          seen.codes.push_back(ErrorCode::Internal);  // returned: not what we want
          seen.messages.push_back("returned");
        } catch (const Error& e) {
          seen.codes.push_back(e.code());
          seen.messages.push_back(e.what());
        }
      };
      expect_error([&] { engine.generate(text_request(2)); });
      expect_error([&] { engine.transcribe(std::vector<float>(1600, 0.0f), 16000); });
      expect_error([&] { engine.synthesize(SpeechRequest{}); });
      expect_error([&] { engine.shutdown(); });
      expect_error([&] { EngineImpl::of(engine).run_on_worker([](EngineCore&) {}); });
      StreamHandle other = engine.generate_streaming(text_request(2));
      expect_error([&] { other.next(); });
      // Calls that only queue work stay allowed.
      seen.nested_id = engine.generate_streaming(text_request(2), [](const StreamChunk&) {});
      engine.abort(seen.nested_id);
      (void)engine.metrics();
    }
    if (chunk.finished) done.set_value();
  });
  wait_or_die(finished, "callback request");
  ASSERT_EQ(seen.codes.size(), 6u);
  for (size_t i = 0; i < seen.codes.size(); ++i) {
    EXPECT_EQ(seen.codes[i], ErrorCode::InvalidArgument) << seen.messages[i];
    EXPECT_NE(seen.messages[i].find("would deadlock"), std::string::npos) << seen.messages[i];
  }
  EXPECT_FALSE(seen.nested_id.empty());
  // The engine is still fully usable from a host thread.
  EXPECT_EQ(engine.generate(text_request(3)).tokens.size(), 3u);
  EXPECT_EQ(testing::check_idle(engine), "");
}

// Finding 2: dropping the last Engine inside its own callback made the worker join itself.
TEST(EngineHardening, DroppingTheEngineInsideItsOwnCallbackEndsEveryRequest) {
  auto holder = std::make_unique<Engine>(testing::fixture_dir("llama-tiny"));
  const std::weak_ptr<EngineImpl> impl = EngineImpl::of(*holder).weak_from_this();
  StreamHandle bystander = holder->generate_streaming(text_request(400));
  std::promise<FinishReason> done;
  std::future<FinishReason> finished = done.get_future();
  int chunks = 0;
  holder->generate_streaming(text_request(400), [&](const StreamChunk& chunk) {
    if (++chunks == 3) holder.reset();  // the last reference, on the worker thread
    if (chunk.finished) done.set_value(chunk.finish_reason);
  });
  wait_or_die(finished, "callback request");
  EXPECT_EQ(finished.get(), FinishReason::Abort);
  StreamChunk last;
  testing::drain(bystander, &last);
  EXPECT_EQ(last.finish_reason, FinishReason::Abort);
  // The worker frees the engine once its loop has returned.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!impl.expired() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(impl.expired());
}

TranscriptionOptions voxtral_options() {
  TranscriptionOptions o;
  o.pad_token_id = 32;  // the fixture's stand-in for the streaming pad token
  o.delay_tokens = 6;
  return o;
}

std::vector<int32_t> read_all(TranscriptionStream& stream) {
  std::vector<int32_t> tokens;
  while (std::optional<StreamChunk> piece = stream.next()) {
    tokens.insert(tokens.end(), piece->tokens.begin(), piece->tokens.end());
  }
  return tokens;
}

// Finding 3: live streams waiting for audio (finish_audio never called) kept their batch slots,
// so max_batch_size of them starved every other request.
TEST(EngineHardening, IdleLiveStreamsGiveTheirSlotsToWaitingRequests) {
  EngineConfig config;
  config.max_batch_size = 2;
  config.stream_idle_timeout_ms = 200;
  const std::string dir = testing::fixture_dir("voxtral-realtime-tiny");
  Engine engine(dir, config);
  const std::vector<float> audio = load_audio_mono(dir + "/audio.wav", 16000);
  const std::vector<int32_t> expected = testing::ReferenceTensors("voxtral-realtime-tiny").ids("generated");
  const size_t first_part = 16000;  // 1 s of the 2.37 s
  std::vector<TranscriptionStream> streams;
  std::vector<std::vector<int32_t>> tokens(2);
  for (int i = 0; i < 2; ++i) {
    streams.push_back(engine.start_transcription(voxtral_options()));
    streams.back().push_audio(audio.data(), first_part, 16000);
    std::optional<StreamChunk> piece = streams.back().next();  // running, then waiting for audio
    ASSERT_TRUE(piece.has_value());
    tokens[i] = piece->tokens;
  }
  Request text;
  text.prompt_ids = {1, 40, 41, 42};
  text.params.max_tokens = 8;
  text.params.min_tokens = 8;
  auto done = std::async(std::launch::async, [&] { return engine.generate(text); });
  wait_or_die(done, "text request behind two idle streams");
  EXPECT_EQ(done.get().tokens.size(), 8u);
  int parked = 0;
  EngineImpl::of(engine).run_on_worker([&](EngineCore& core) {
    for (const TranscriptionStream& s : streams) parked += core.find(s.id())->parked ? 1 : 0;
  });
  EXPECT_GE(parked, 1);  // at least one gave its slot (both when the text request arrived first)
  // The parked streams resume when their audio comes, with the same tokens as offline.
  for (int i = 0; i < 2; ++i) {
    streams[i].push_audio(audio.data() + first_part, audio.size() - first_part, 16000);
    streams[i].finish_audio();
    const std::vector<int32_t> rest = read_all(streams[i]);
    tokens[i].insert(tokens[i].end(), rest.begin(), rest.end());
    EXPECT_EQ(tokens[i], expected) << "stream " << i;
  }
  EXPECT_EQ(testing::check_idle(engine), "");

  EngineConfig bad;
  bad.stream_idle_timeout_ms = -1;
  EXPECT_THROW(bad.validate(), Error);
  EXPECT_THROW(EngineConfig::from_json_string(R"({"stream_idle_timeout_ms": -5})"), Error);
  EXPECT_EQ(EngineConfig::from_json_string(R"({"stream_idle_timeout_ms": 5})").stream_idle_timeout_ms, 5);
}

// Peak resident memory of this process so far, in bytes.
int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

// Finding 4: the audio encoder attended over a whole pushed file at once: memory grew with the
// square of its length (0.5 GB for 1 min, 4.9 GB for 4 min on this fixture).
TEST(EngineHardening, LongAudioIsEncodedInBoundedPassesWithTheSameTokens) {
  Engine engine(testing::fixture_dir("voxtral-realtime-tiny"));
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  std::vector<float> audio(60 * 16000);
  for (float& x : audio) x = noise(rng);

  const int64_t before = peak_rss_bytes();
  ASSERT_GT(before, 0);
  const Output whole = engine.transcribe(audio, 16000, voxtral_options());
  const int64_t growth = peak_rss_bytes() - before;
  // 750 positions. Linear state: 6,000 mel frames (3 MB), 3,000 encoder frames, 750 embeddings,
  // the decoder's KV and prefill chunks of 512 positions: tens of MB. One unbounded pass over the
  // 3,000 encoder frames needs its [heads, 3000, 3000] scores several times over (0.5 GB).
  EXPECT_LT(growth, int64_t{160} << 20) << "peak RSS grew by " << (growth >> 20) << " MiB";
  std::printf("60 s of audio at once: peak RSS grew by %lld MiB\n", static_cast<long long>(growth >> 20));
  EXPECT_GE(whole.tokens.size(), 700u);  // one per 80 ms after the 7-position prompt

  TranscriptionStream stream = engine.start_transcription(voxtral_options());
  for (size_t pos = 0; pos < audio.size(); pos += 1280) {  // 80 ms
    stream.push_audio(audio.data() + pos, std::min<size_t>(1280, audio.size() - pos), 16000);
  }
  stream.finish_audio();
  EXPECT_EQ(read_all(stream), whole.tokens);
  EXPECT_EQ(testing::check_idle(engine), "");
}

// Finding 5: a huge delay_tokens sized the prompt (delay_tokens pad ids) before it was checked.
TEST(EngineHardening, HugeDelayTokensIsRejectedBeforeAnythingIsAllocated) {
  Engine engine(testing::fixture_dir("voxtral-realtime-tiny"));
  for (int32_t delay :
       {2000000000, std::numeric_limits<int32_t>::max(), 513, -2, std::numeric_limits<int32_t>::min()}) {
    TranscriptionOptions o;
    o.pad_token_id = 32;
    o.delay_tokens = delay;
    try {
      engine.start_transcription(o);
      ADD_FAILURE() << "delay_tokens = " << delay << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("delay_tokens"), std::string::npos) << e.what();
    }
    EXPECT_THROW(engine.transcribe(std::vector<float>(16000, 0.0f), 16000, o), Error);
  }
  EXPECT_EQ(testing::check_idle(engine), "");
}

TEST(EngineHardening, CliHugeDelayTokensExitsWithOne) {
  const std::string dir = testing::fixture_dir("voxtral-realtime-tiny");
  for (const char* delay : {"2000000000", "2e9", "-7"}) {
    for (const char* mode : {"", " --stream"}) {
      const testing::CliRun run =
          testing::run_example("izwi-transcribe", "--model " + dir + " --audio " + dir +
                                                      "/audio.wav --pad-id 32 --delay-tokens " + delay + mode);
      EXPECT_EQ(run.exit_code, 1) << delay << mode << ": " << run.err;
      EXPECT_NE(run.err.find("delay"), std::string::npos) << delay << mode << ": " << run.err;
    }
  }
}

}  // namespace
}  // namespace izwi
