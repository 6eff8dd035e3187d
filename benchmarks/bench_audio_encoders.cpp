// The audio encoders and the codec transformer end to end on random weights of their released
// widths (a few layers each), on the host backend: the four attentions that ops::attention serves
// (FastConformer's relative-position one, the Voxtral encoder's sliding window, the codec's
// windowed transformer in both styles, the depthformer's GQA) with everything around them. Run it
// before and after a change to an op they call. CPU time per iteration, on every intra-op thread.

#include <ATen/ATen.h>
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "bench_support/random_weights.h"
#include "codec/windowed_transformer.h"
#include "kernels/backend.h"
#include "layers/step/forward_context.h"
#include "models/lfm2_audio/depthformer.h"
#include "models/lfm2_audio/fast_conformer.h"
#include "models/voxtral_audio_encoder.h"
#include "sampling/sampler.h"

namespace izwi {
namespace {

// LFM2-Audio's encoder widths (d_model 512, 8 heads, k9 depthwise conv, 256 subsampling channels),
// 2 of its 17 layers. Args: seconds of 100 Hz mel frames; 1 for izwi's CPU kernels (the host
// backend), 0 for libtorch's ops (the reference backend).
void BM_FastConformerEncode(benchmark::State& state) {
  FastConformerConfig config;
  config.n_layers = 2;
  config.d_model = 512;
  config.n_heads = 8;
  config.subsampling_factor = 8;
  config.subsampling_conv_channels = 256;
  config.conv_kernel_size = 9;
  RandomWeights weights(1, at::kCPU);
  const Backend reference = Backend::reference(at::kCPU, at::kFloat);
  if (state.range(1) == 0) weights.set_backend(reference);
  const FastConformerEncoder encoder(weights, config);
  const at::Tensor mel = at::randn({config.feat_in, state.range(0) * 100});
  for (auto _ : state) benchmark::DoNotOptimize(encoder.encode(mel));
}

// Voxtral Realtime's encoder widths (hidden 1280, 32 heads of 64, window 750), 2 of its layers:
// one stream fed Arg mel frames per call, its K/V window filling as it goes.
void BM_VoxtralEncoderStream(benchmark::State& state) {
  VoxtralEncoderConfig config;
  config.hidden_size = 1280;
  config.intermediate_size = 5120;
  config.num_layers = 2;
  config.num_heads = 32;
  config.num_kv_heads = 32;
  config.head_dim = 64;
  config.sliding_window = 750;
  config.text_hidden_size = 3072;
  RandomWeights weights(2, at::kCPU);
  const VoxtralAudioEncoder encoder(weights, config);
  ForwardContext ctx;
  ctx.backend = &Backend::host();
  const at::Tensor mel = at::randn({config.mel_bins, state.range(0)});
  VoxtralAudioEncoder::State stream = encoder.make_state();
  // Past the window: every call attends over a full window of kept K/V.
  for (int i = 0; i < 2 * 750 * 2 / state.range(0); ++i) encoder.encode(stream, mel, ctx);
  for (auto _ : state) benchmark::DoNotOptimize(encoder.encode(stream, mel, ctx));
}

// The codec's windowed transformer (Qwen3-TTS's: hidden 512, 16 heads, window 72, 8 layers;
// Mimi's: hidden 512, 8 heads, window 250, 8 layers): one stream, Arg frames per call.
void windowed_transformer(benchmark::State& state, WindowedTransformerConfig::Style style) {
  const bool mimi = style == WindowedTransformerConfig::Style::kMimi;
  WindowedTransformerConfig config;
  config.style = style;
  config.hidden_size = 512;
  config.input_dim = mimi ? 512 : 1024;
  config.intermediate_size = mimi ? 2048 : 1024;
  config.num_layers = 8;
  config.num_heads = mimi ? 8 : 16;
  config.num_kv_heads = config.num_heads;
  config.head_dim = 64;
  config.sliding_window = mimi ? 250 : 72;
  RandomWeights weights(3, at::kCPU);
  const WindowedTransformer transformer(weights, "decoder", config);
  std::vector<at::Tensor> states;
  transformer.append_initial_state(states, 1, at::TensorOptions(at::kFloat));
  const at::Tensor x = at::randn({1, state.range(0), config.input_dim});
  std::vector<int64_t> position{1000};
  for (auto _ : state) benchmark::DoNotOptimize(transformer.forward(x, position, states.data()));
}

void BM_WindowedTransformerQwen3Tts(benchmark::State& state) {
  windowed_transformer(state, WindowedTransformerConfig::Style::kQwen3Tts);
}
void BM_WindowedTransformerMimi(benchmark::State& state) {
  windowed_transformer(state, WindowedTransformerConfig::Style::kMimi);
}

// LFM2-Audio's depthformer (dim 1024, 6 layers, 32 heads over 8 K/V heads, 8 codebooks): one
// frame of codes for Arg rows, greedy.
void BM_DepthformerFrame(benchmark::State& state) {
  DepthformerConfig config;
  config.input_dim = 2048;
  config.dim = 1024;
  config.layers = 6;
  config.ffn_dim = 2816;
  RandomWeights weights(4, at::kCPU);
  const Depthformer depthformer(weights, config);
  const int64_t rows = state.range(0);
  const at::Tensor hidden = at::randn({rows, config.input_dim});
  std::vector<SamplingState> sampling(static_cast<size_t>(rows));
  std::vector<SamplingState*> pointers;
  for (SamplingState& s : sampling) pointers.push_back(&s);
  Sampler sampler;
  for (auto _ : state) benchmark::DoNotOptimize(depthformer.frames(hidden, pointers, sampler, Backend::host()));
}

}  // namespace
}  // namespace izwi

BENCHMARK(izwi::BM_FastConformerEncode)->Args({10, 1})->Args({10, 0})->Unit(benchmark::kMillisecond);
BENCHMARK(izwi::BM_VoxtralEncoderStream)->Arg(8)->Arg(160)->Unit(benchmark::kMillisecond);
BENCHMARK(izwi::BM_WindowedTransformerQwen3Tts)->Arg(4)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(izwi::BM_WindowedTransformerMimi)->Arg(4)->Arg(100)->Unit(benchmark::kMillisecond);
BENCHMARK(izwi::BM_DepthformerFrame)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
