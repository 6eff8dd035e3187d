// The speech models' per-frame chains captured as CUDA graphs (executor/frame_chain_graphs.h)
// against the same chains run eagerly on the device: the helper over a small chain of draws
// (seeded and greedy, several frames, buckets 1 and 4 with a padded row), and the Qwen3-TTS code
// predictor and LFM2-Audio depthformer through the engine with use_cuda_graphs on and off. With
// graphs on, the engine's decode steps also replay the speech backbones (the talker, LFM2-Audio's
// LFM2) from their input embeddings (executor/cuda_decode_graphs.h); the engine tests check that
// they did, one request and three together (buckets 1 and 2 or 4).
// Written on 2026-11-29 and compile-checked only: not yet run on a GPU.

#include <ATen/Parallel.h>

#include <future>
#include <map>
#include <string>
#include <vector>

#include "common/op_profile.h"
#include "common/reference.h"
#include "cuda/cuda_test_util.h"
#include "executor/frame_chain_graphs.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "kernels/backend.h"
#include "sampling/sampler.h"

namespace izwi {
namespace {

using testing::fixture_dir;

constexpr int32_t kSteps = 6;
constexpr int64_t kWidth = 32, kVocab = 257;

/// A chain of kSteps draws: each step's logits a product of the running input, the step's id
/// added back through an embedding (as the models' chains feed the drawn code forward).
struct SmallChain {
  at::Tensor weight, table;

  explicit SmallChain(const at::Device& device) {
    at::manual_seed(3);
    weight = at::randn({kWidth, kVocab}).to(device);
    table = (at::randn({kVocab, kWidth}) * 0.5).to(device);
  }

  at::Tensor operator()(const at::Tensor& inputs, const ChainSample& sample) const {
    at::Tensor x = inputs;
    std::vector<at::Tensor> ids;
    for (int32_t j = 0; j < kSteps; ++j) {
      ids.push_back(sample(j, at::matmul(x, weight) * (1.0 + 0.25 * j)));
      x = x + table.index_select(0, ids.back());
    }
    return at::stack(ids, 1);
  }
};

std::vector<SamplingState> states(size_t rows, bool seeded) {
  std::vector<SamplingState> out(rows);
  for (size_t r = 0; r < rows; ++r) {
    if (seeded) {
      out[r].temperature = 0.8f + 0.1f * static_cast<float>(r);
      out[r].top_k = r % 2 == 0 ? 40 : 0;
      out[r].top_p = 0.95f;
    }
    out[r].reseed(1000 + r);
  }
  return out;
}

std::vector<SamplingState*> pointers(std::vector<SamplingState>& states) {
  std::vector<SamplingState*> out;
  for (SamplingState& s : states) out.push_back(&s);
  return out;
}

TEST(FrameChainGraphsCuda, ReplaysDrawWhatTheEagerChainDraws) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  BackendOptions options;
  options.device = "cuda";
  options.max_graph_batch = 8;
  options.threads = at::get_num_threads();
  const Backend backend(options);
  ASSERT_EQ(backend.max_graph_batch(), 8);
  const SmallChain chain(backend.device());
  std::unique_ptr<FrameChainGraphs> graphs =
      make_frame_chain_graphs(FrameChainSettings{&backend, kSteps, kVocab, backend.max_graph_batch()});
  ASSERT_NE(graphs, nullptr);
  int32_t captures = 0;
  const auto make_chain = [&](int32_t) -> FrameChain {
    ++captures;
    return [&chain](const at::Tensor& in, const ChainSample& sample) { return chain(in, sample); };
  };
  Sampler sampler;
  for (const bool seeded : {false, true}) {
    // 3 rows (bucket 4, one padding row), 1 row (bucket 1), then 3 again (a replay of bucket 4).
    for (const size_t rows : {size_t{3}, size_t{1}, size_t{3}}) {
      std::vector<SamplingState> eager_states = states(rows, seeded), graph_states = states(rows, seeded);
      const std::vector<SamplingState*> eager = pointers(eager_states), graph = pointers(graph_states);
      ASSERT_TRUE(graphs->replays(graph));
      for (int frame = 0; frame < 4; ++frame) {
        SCOPED_TRACE(::testing::Message()
                     << (seeded ? "seeded" : "greedy") << ", " << rows << " rows, frame " << frame);
        const at::Tensor inputs = at::randn({static_cast<int64_t>(rows), kWidth}).to(backend.device());
        const std::vector<std::vector<int32_t>> expected =
            frame_codes(chain(inputs, [&](int32_t, const at::Tensor& logits) {
              return sampler.sample_rows_on_device(logits, eager, backend);
            }));
        EXPECT_EQ(frame_codes(graphs->run(inputs, graph, make_chain)), expected);
        for (size_t r = 0; r < rows; ++r) EXPECT_EQ(graph_states[r].draws, eager_states[r].draws);
      }
    }
  }
  EXPECT_EQ(captures, 2) << "one graph per bucket";

  // A row with per-draw host work makes the frame eager.
  std::vector<SamplingState> suppressed = states(2, true);
  suppressed[1].suppressed = {5};
  EXPECT_FALSE(graphs->replays(pointers(suppressed)));
}

EngineConfig cuda_config(bool graphs) {
  EngineConfig config;
  config.device = "cuda";
  config.use_cuda_graphs = graphs;
  return config;
}

/// The decode steps `run` replayed from a CUDA graph, by their rows (the op profile's GraphReplay
/// entries: only the executor's decode graphs file them, not the frame chains).
template <typename Run>
std::map<int64_t, int64_t> replayed_steps(const Run& run) {
  take_op_profile();
  set_op_profiling(true);
  run();
  set_op_profiling(false);
  std::map<int64_t, int64_t> replays;
  for (const auto& [key, entry] : take_op_profile()) {
    if (key.first == ProfiledOp::GraphReplay) replays[key.second] += entry.calls;
  }
  return replays;
}

/// The backbone's decode steps replayed, and with `together` requests some with more than one row.
void expect_backbone_replays(const std::map<int64_t, int64_t>& replays, size_t together) {
  EXPECT_FALSE(replays.empty()) << "no decode step replayed the backbone's graph";
  if (together > 1) {
    EXPECT_TRUE(replays.rbegin()->first > 1) << "no replayed step had more than one row: the requests did not overlap";
  }
}

/// `together` requests at once on `engine`, request c's output from `call(engine, c)`, in order.
template <typename Call>
std::vector<Output> run_together(Engine& engine, size_t together, const Call& call) {
  std::vector<std::future<Output>> outputs;
  for (size_t c = 0; c < together; ++c) {
    outputs.push_back(std::async(std::launch::async, [&engine, &call, c] { return call(engine, c); }));
  }
  std::vector<Output> results;
  for (std::future<Output>& o : outputs) results.push_back(o.get());
  return results;
}

SpeechRequest speech_request(size_t c, bool seeded) {
  const testing::ReferenceTensors ref("qwen3-tts-tiny");
  SpeechRequest r;
  r.text_ids = ref.ids("case" + std::to_string(c) + ".input_ids");
  r.speaker = c % 2 == 0 ? "alice" : "bob";
  r.language = "english";
  r.text_mode = SpeechTextMode::Streaming;
  r.params.max_frames = 10;
  for (SamplingParams* p : {&r.params.sampling, &r.params.codebook_sampling}) {
    p->temperature = seeded ? 0.9f : 0.0f;
    p->top_k = 50;
  }
  if (seeded) r.params.seed = 77 + c;
  return r;
}

TEST(FrameChainGraphsCuda, Qwen3TtsFramesWithAndWithoutGraphsAreEqual) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  Engine eager(fixture_dir("qwen3-tts-tiny"), cuda_config(false));
  Engine graphs(fixture_dir("qwen3-tts-tiny"), cuda_config(true));
  for (const bool seeded : {false, true}) {
    // One request (bucket 1), then three together (buckets up to 4, a padded row).
    for (const size_t together : {size_t{1}, size_t{3}}) {
      const auto synthesize = [seeded](Engine& engine, size_t c) {
        return engine.synthesize(speech_request(c, seeded));
      };
      const std::vector<Output> expected = run_together(eager, together, synthesize);
      std::vector<Output> got;
      expect_backbone_replays(replayed_steps([&] { got = run_together(graphs, together, synthesize); }), together);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t c = 0; c < got.size(); ++c) {
        EXPECT_GE(got[c].audio_codes.size(), 2u);
        EXPECT_EQ(got[c].audio_codes, expected[c].audio_codes)
            << (seeded ? "seeded" : "greedy") << ", " << together << " together, case " << c;
      }
    }
  }
}

AudioChatRequest chat_request(bool seeded) {
  const testing::ReferenceTensors ref("lfm2-audio-tiny");
  const std::vector<int32_t> ids = ref.ids("text_ids");
  AudioChatRequest r;
  r.pre_ids.assign(ids.begin(), ids.begin() + 9);
  r.post_ids.assign(ids.begin() + 9, ids.end());
  const AudioBuffer wav = read_audio(fixture_dir("lfm2-audio-tiny") + "/audio.wav");
  r.audio = wav.samples;
  r.sample_rate = wav.sample_rate;
  r.mode = AudioChatMode::Interleaved;
  r.max_items = 40;
  for (SamplingParams* p : {&r.text_sampling, &r.audio_sampling}) {
    p->temperature = seeded ? 0.9f : 0.0f;
    p->top_k = 50;
  }
  if (seeded) r.seed = 5;
  return r;
}

TEST(FrameChainGraphsCuda, Lfm2AudioFramesWithAndWithoutGraphsAreEqual) {
  if (!cuda_test::has_device()) GTEST_SKIP() << "no CUDA device";
  Engine eager(fixture_dir("lfm2-audio-tiny"), cuda_config(false));
  Engine graphs(fixture_dir("lfm2-audio-tiny"), cuda_config(true));
  for (const bool seeded : {false, true}) {
    for (const size_t together : {size_t{1}, size_t{3}}) {
      const auto chat = [seeded](Engine& engine, size_t) { return engine.audio_chat(chat_request(seeded)); };
      const std::vector<Output> expected = run_together(eager, together, chat);
      std::vector<Output> got;
      expect_backbone_replays(replayed_steps([&] { got = run_together(graphs, together, chat); }), together);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t c = 0; c < got.size(); ++c) {
        const std::string what = std::string(seeded ? "seeded" : "greedy") + ", " + std::to_string(together) +
                                 " together, request " + std::to_string(c);
        EXPECT_FALSE(got[c].audio_codes.empty()) << "no audio frame";
        EXPECT_EQ(got[c].audio_codes, expected[c].audio_codes) << what;
        // Text items too: the text head samples the replayed backbone's hidden states.
        EXPECT_EQ(got[c].tokens, expected[c].tokens) << what;
      }
    }
  }
}

}  // namespace
}  // namespace izwi
