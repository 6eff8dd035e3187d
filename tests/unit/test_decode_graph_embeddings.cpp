// The host side of a decode step that a CUDA graph from embeddings replays
// (executor/cuda_decode_graphs.h, graph_safe_decode_from_embeddings), run on the CPU without the
// capture: the batch padded to its bucket, the input embeddings of the batch's own sequences
// written into the leading rows of a [bucket, hidden] buffer (write_input_embeddings), then
// forward_embeddings over the padded batch, against the eager forward pass of the same batch,
// step after step of the speech models' generation (three requests in a bucket of four, and four).

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/reference.h"
#include "engine/request_processor.h"
#include "executor/decode_graph_batch.h"
#include "izwi/audio.h"
#include "izwi/audio_chat.h"
#include "izwi/speech.h"
#include "kernels/backend.h"
#include "layers/step/cache_buffers.h"
#include "models/model_registry.h"
#include "sampling/sampler.h"

namespace izwi {
namespace {

constexpr int64_t kBlockSize = 16;
constexpr float kPaddedHiddenMaxAbs = 1e-5f;

struct Sequence {
  SpeechPrompt prompt;
  SamplingState sampling;
  std::vector<int32_t> tokens;
  std::vector<int32_t> table;
};

/// The CPU backend, as the executor holds one.
std::shared_ptr<const Backend> host() {
  return {&Backend::host(), [](const Backend*) {}};
}

/// Runs up to `steps` decode steps of `prompts` (greedy; fewer when a request ends) eagerly on one
/// cache and as a graph from embeddings would on another; the leading rows must be the eager
/// pass's hidden states. Returns the steps run.
int expect_padded_steps_match_eager_steps(const std::unique_ptr<CausalLM>& model, std::vector<SpeechPrompt> prompts,
                                          int steps) {
  const std::shared_ptr<const Backend> backend = host();
  EXPECT_TRUE(model->spec().graph_safe_decode_from_embeddings);
  const int32_t n = static_cast<int32_t>(prompts.size());
  std::vector<Sequence> seqs(prompts.size());
  int64_t longest = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Sequence& s = seqs[i];
    s.prompt = std::move(prompts[i]);
    s.prompt.params.sampling.temperature = 0.0f;
    s.sampling = make_sampling_state(s.prompt.params, model->spec().default_sampling, model->spec().eos_token_ids);
    s.sampling.suppressed = model->spec().suppressed_token_ids;  // as the engine's request processor
    SamplingParams greedy;
    greedy.temperature = 0.0f;
    *s.prompt.codebook_sampling = make_codebook_sampling_state(greedy, model->spec().default_codebook_sampling, 1);
    s.tokens = s.prompt.keys;
    s.sampling.history = &s.tokens;  // seqs is not resized: the pointer stays valid
    s.sampling.history_begin = s.tokens.size();
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.tokens.size()));
  }
  const int32_t blocks = static_cast<int32_t>((longest + steps + kBlockSize) / kBlockSize);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t b = 0; b < blocks; ++b) seqs[static_cast<size_t>(i)].table.push_back(i * blocks + b);
  }
  const bool slots = model->spec().needs_state_slots;
  // One block and one state slot more, for the padding sequences, as the executor allocates.
  const auto cache = [&] {
    return CacheBuffers(model->cache_layout(), n * blocks + 1, kBlockSize, slots ? n + 1 : 0, backend->options(),
                        backend->kv_dtype());
  };
  CacheBuffers eager = cache(), graph = cache();
  DecodeBatchPadder padder(DecodeGraphPadding{n * blocks, slots ? n : -1});
  Sampler sampler;

  const auto batch_of = [&](bool prefill) {
    StepBatch batch;
    for (int32_t i = 0; i < n; ++i) {
      Sequence& s = seqs[static_cast<size_t>(i)];
      StepSequence step;
      step.start_pos = prefill ? 0 : static_cast<int32_t>(s.tokens.size()) - 1;
      step.num_tokens = prefill ? static_cast<int32_t>(s.tokens.size()) : 1;
      step.token_ids = s.tokens.data() + step.start_pos;
      step.block_table = &s.table;
      step.state_slot = slots ? i : -1;
      step.fresh_state = prefill;
      step.state = s.prompt.state.get();
      step.sampling = &s.sampling;
      batch.seqs.push_back(step);
    }
    return batch;
  };
  // Samples every sequence's last row of the eager pass; false once one ends.
  const auto sample = [&](const at::Tensor& hidden, const ForwardContext& ctx) {
    std::vector<int64_t> last;
    std::vector<SampleRow> rows;
    for (size_t i = 0; i < ctx.seqs.size(); ++i) {
      last.push_back(ctx.seqs[i].offset + ctx.seqs[i].length - 1);
      rows.push_back(SampleRow{&seqs[i].sampling, seqs[i].prompt.state.get()});
    }
    const std::vector<StepOutput> out =
        model->sample(hidden.index_select(0, at::tensor(last)), rows, ctx, eager, sampler);
    bool going = true;
    for (size_t i = 0; i < out.size(); ++i) {
      seqs[i].tokens.push_back(out[i].token);
      ++seqs[i].sampling.num_generated;
      going = going && std::find(model->spec().eos_token_ids.begin(), model->spec().eos_token_ids.end(),
                                 out[i].token) == model->spec().eos_token_ids.end();
    }
    return going;
  };

  {
    const StepBatch prefill = batch_of(true);
    const ForwardContext ctx = make_forward_context(prefill, kBlockSize, *backend);
    const at::Tensor hidden = model->forward(ctx, eager);
    model->forward(make_forward_context(prefill, kBlockSize, *backend), graph);
    if (!sample(hidden, ctx)) return 0;
  }
  const int32_t bucket = decode_graph_bucket(n, 256);
  at::Tensor inputs = at::zeros({bucket, model->spec().hidden_size}, backend->options());
  int step = 0;
  for (; step < steps; ++step) {
    SCOPED_TRACE(model->spec().model_type + " decode step " + std::to_string(step));
    const StepBatch batch = batch_of(false);
    EXPECT_TRUE(replayable_decode_step(batch, 256));
    const ForwardContext ctx = make_forward_context(batch, kBlockSize, *backend);
    const at::Tensor expected = model->forward(ctx, eager);
    const ForwardContext padded = make_forward_context(padder.pad(batch, bucket), kBlockSize, *backend,
                                                       decode_graph_table_stride(batch, kBlockSize, blocks));
    const ForwardContext own = write_input_embeddings(*model, padded, batch.seqs.size(), inputs);
    EXPECT_EQ(own.num_tokens, n);
    EXPECT_TRUE(at::equal(inputs.narrow(0, 0, n), model->input_embeddings(ctx))) << "the batch's own embeddings";
    const at::Tensor got = model->forward_embeddings(inputs.clone(), padded, graph);
    EXPECT_EQ(got.size(0), bucket);
    // A full bucket is the eager pass bit for bit. With padding rows the CPU's products round a
    // 4-row batch differently from a 3-row one (measured: at most 1.6e-6, entries of order 1).
    const float diff = (got.narrow(0, 0, n) - expected).abs().max().item<float>();
    if (bucket == n) {
      EXPECT_EQ(diff, 0.0f);
    } else {
      EXPECT_LT(diff, kPaddedHiddenMaxAbs);
    }
    EXPECT_TRUE(inputs.narrow(0, n, bucket - n).eq(0).all().item<bool>()) << "the padding rows' inputs were written";
    EXPECT_TRUE(got.narrow(0, n, bucket - n).isfinite().all().item<bool>());
    if (!sample(expected, ctx)) return step + 1;
  }
  return step;
}

TEST(DecodeGraphFromEmbeddings, Qwen3TtsPaddedStepsAreTheEagerSteps) {
  const testing::ReferenceTensors ref("qwen3-tts-tiny");
  const std::unique_ptr<CausalLM> model = load_causal_lm(testing::fixture_dir("qwen3-tts-tiny"), host());
  const auto prompts = [&](int count) {
    std::vector<SpeechPrompt> out;
    for (int c = 0; c < count; ++c) {
      SpeechRequest r;
      r.text_ids = ref.ids("case" + std::to_string(c % 3) + ".input_ids");
      r.speaker = c % 2 == 0 ? "alice" : "bob";
      r.language = "english";
      r.text_mode = c == 2 ? SpeechTextMode::Full : SpeechTextMode::Streaming;
      r.params.max_frames = 20;
      out.push_back(model->capabilities().speech->speech_prompt(r, nullptr));
    }
    return out;
  };
  EXPECT_EQ(expect_padded_steps_match_eager_steps(model, prompts(3), 6), 6);  // a padding row
  EXPECT_EQ(expect_padded_steps_match_eager_steps(model, prompts(4), 6), 6);  // a full bucket
}

TEST(DecodeGraphFromEmbeddings, Lfm2AudioPaddedStepsAreTheEagerSteps) {
  const testing::ReferenceTensors ref("lfm2-audio-tiny");
  const std::unique_ptr<CausalLM> model = load_causal_lm(testing::fixture_dir("lfm2-audio-tiny"), host());
  const std::vector<int32_t> ids = ref.ids("text_ids");
  const AudioBuffer wav = read_audio(testing::fixture_dir("lfm2-audio-tiny") + "/audio.wav");
  const auto prompts = [&](int count) {
    std::vector<SpeechPrompt> out;
    for (int c = 0; c < count; ++c) {
      AudioChatRequest r;
      r.pre_ids.assign(ids.begin(), ids.begin() + 9);
      r.post_ids.assign(ids.begin() + 9, ids.end() - c);  // prompts of different lengths
      r.audio = wav.samples;
      r.sample_rate = wav.sample_rate;
      r.mode = AudioChatMode::Interleaved;  // text items, then frames: both kinds of input row
      r.max_items = 40;
      out.push_back(model->capabilities().audio_chat->audio_chat_prompt(r, nullptr));
    }
    return out;
  };
  // 6 text items (interleaved_n_text), then frames: all 12 steps feed both kinds of row.
  EXPECT_EQ(expect_padded_steps_match_eager_steps(model, prompts(3), 12), 12);
  EXPECT_EQ(expect_padded_steps_match_eager_steps(model, prompts(4), 12), 12);
}

}  // namespace
}  // namespace izwi
