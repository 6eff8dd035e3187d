// Micro-benchmarks of the CPU kernels. Linear layers and reads report the bytes streamed per second
// as "GB/s" (decimal, to compare with the read probe: BM_ReadBandwidth, izwi-bench); the rest report
// their times.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "bench_support/fma_peak.h"
#include "bench_support/memory_bandwidth.h"
#include "bench_support/random_weights.h"
#include "codec/causal_conv.h"
#include "kernels/backend.h"
#include "kernels/cpu/attention_inputs_cpu.h"
#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/paged_attention_cpu.h"
#include "kernels/cpu/panel_linear_cpu.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"
#include "kernels/ops/prefill_attention_op.h"
#include "layers/packed_weight.h"
#include "quant/quantize.h"
#include "sampling/sampler.h"

namespace {

using izwi::WeightFormat;

// A weight matrix as one of izwi's two CPU kernels takes it: row-major for linear_cpu (the
// streaming GEMV, Eigen past 16 tokens), packed in panels for linear_packed_cpu.
struct BenchWeight {
  at::Tensor data;
  WeightFormat format;
  int64_t out, in;
  bool packed;

  BenchWeight(int64_t out_features, int64_t in_features, bool bf16, bool pack)
      : format(bf16 ? WeightFormat::BF16 : WeightFormat::F32), out(out_features), in(in_features), packed(pack) {
    const at::Tensor rows = (at::randn({out, in}) * 0.02).to(bf16 ? at::kBFloat16 : at::kFloat);
    if (!pack) {
      data = rows;
      return;
    }
    data = at::empty({izwi::packed_elements(out, in, format)}, rows.options());
    izwi::pack_panels(rows.data_ptr(), format, out, in, data.data_ptr());
  }
  int64_t bytes() const { return out * in * static_cast<int64_t>(data.element_size()); }
  void apply(const at::Tensor& x, at::Tensor& y) const {
    if (packed) {
      izwi::linear_packed_cpu(x.data_ptr<float>(), x.size(0), in, data.data_ptr(), format, out, nullptr,
                              y.data_ptr<float>());
    } else {
      izwi::linear_cpu(x.data_ptr<float>(), x.size(0), in, data.data_ptr(), format, out, nullptr, y.data_ptr<float>());
    }
  }
};

// Bytes per second in decimal GB/s, the unit of the read probe (BM_ReadBandwidth, izwi-bench) they
// are compared with; Google Benchmark's own bytes_per_second counts GiB/s, 7.4% less.
void set_byte_counter(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] = benchmark::Counter(bytes_per_iteration * static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
}

void set_flop_counter(benchmark::State& state, double flop_per_iteration) {
  state.counters["GFLOP/s"] = benchmark::Counter(flop_per_iteration * static_cast<double>(state.iterations()) / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// Args: out, in, tokens, bf16, packed
void BM_Linear(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const BenchWeight w(out, in, state.range(3) != 0, state.range(4) != 0);
  const at::Tensor x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    w.apply(x, y);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  set_byte_counter(state, static_cast<double>(w.bytes()));
  set_flop_counter(state, 2.0 * out * in * tokens);
}

// The panel kernels' arrangement of row-major inputs alone (PanelKernels::pack_inputs, every tile
// on the calling thread), as each product runs it before multiplying. Args: tokens, in, bf16.
void BM_ArrangeInputs(benchmark::State& state) {
  const int64_t tokens = state.range(0), in = state.range(1);
  const WeightFormat format = state.range(2) != 0 ? WeightFormat::BF16 : WeightFormat::F32;
  const izwi::PanelKernels& kernels = izwi::active_panel_kernels();
  const at::Tensor x = at::randn({tokens, in});
  std::vector<float> arranged(static_cast<size_t>(tokens * in));
  const int64_t tiles = izwi::tile_count(tokens, kernels.max_tile_tokens);
  for (auto _ : state) {
    kernels.pack_inputs(izwi::PanelInputs{x.data_ptr<float>(), in, nullptr}, tokens, in, format, arranged.data(), 0,
                        tiles);
    benchmark::DoNotOptimize(arranged.data());
  }
  set_byte_counter(state, static_cast<double>(tokens * in * sizeof(float)));
}

// `tokens` through a stack of `layers` distinct [out, in] matrices, 256 MB and more in total:
// every byte comes from DRAM, as in a decode step. Args: layers, out, in, bf16, packed, tokens.
void BM_LinearStackFromDram(benchmark::State& state) {
  const int64_t layers = state.range(0), out = state.range(1), in = state.range(2), tokens = state.range(5);
  std::vector<BenchWeight> weights;
  for (int64_t l = 0; l < layers; ++l) weights.emplace_back(out, in, state.range(3) != 0, state.range(4) != 0);
  const at::Tensor x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    for (const BenchWeight& w : weights) w.apply(x, y);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  set_byte_counter(state, static_cast<double>(layers * weights[0].bytes()));
  set_flop_counter(state, 2.0 * layers * out * in * tokens);
}

// The same stack through PackedWeight in bf16 (0), int8 (1) or int4 group 32 (2): GB/s counts the
// bytes each format actually reads (quantized: with their scales). Args: layers, out, in, format,
// tokens.
void BM_QuantLinearStackFromDram(benchmark::State& state) {
  const int64_t layers = state.range(0), out = state.range(1), in = state.range(2), format = state.range(3);
  const int64_t tokens = state.range(4);
  const izwi::PanelKernels& kernels = izwi::active_panel_kernels();
  std::vector<izwi::PackedWeight> weights;
  for (int64_t l = 0; l < layers; ++l) {
    const at::Tensor w = at::randn({out, in}) * 0.02;
    weights.push_back(format == 0   ? izwi::PackedWeight::pack(w.to(at::kBFloat16), kernels)
                      : format == 1 ? izwi::PackedWeight::pack(izwi::quantize_int8(w), kernels, "w")
                                    : izwi::PackedWeight::pack(izwi::quantize_int4(w, 32), kernels, "w"));
  }
  const at::Tensor x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    for (const izwi::PackedWeight& w : weights) w.linear_out(x, {}, y);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  set_byte_counter(state, static_cast<double>(layers * weights[0].bytes()));
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens * state.iterations()), benchmark::Counter::kIsRate);
}

// The Qwen3-TTS 12 Hz decoder blocks' transposed convolutions (kernel twice the stride, half the
// channels out) over one stream's chunk of 4 frames, block 0..3, through libtorch's transposed
// convolution (0) or the panel kernels' product and an overlap-add (1).
void BM_CodecTransposedConv(benchmark::State& state) {
  const int64_t block = state.range(0);
  const bool packed = state.range(1) != 0;
  constexpr int64_t kIn[] = {1536, 768, 384, 192}, kStride[] = {8, 5, 4, 3}, kLength[] = {16, 128, 640, 2560};
  const int64_t in = kIn[block], out = in / 2, stride = kStride[block], length = kLength[block];
  izwi::RandomWeights weights(3, at::kCPU);
  const izwi::Backend torch = izwi::Backend::reference(at::kCPU, at::kFloat);
  weights.set_backend(packed ? izwi::Backend::host() : torch);
  const izwi::CausalConvTranspose1d conv(weights, "up", in, out, 2 * stride, stride);
  const at::Tensor x = at::randn({1, in, length});
  at::Tensor carry = conv.initial_state(1, x.options());
  for (auto _ : state) benchmark::DoNotOptimize(conv.forward(x, carry).data_ptr<float>());
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * in * out * 2 * stride * length * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// The Qwen3-TTS 12 Hz decoder blocks' dense convolutions (kernel 7, dilation 3, as in a residual
// unit) over one stream's chunk of 4 frames, block 0..3 (768 channels at 128 positions down to 96
// at 7680), through libtorch's convolution (0) or the panel kernels reading the input in place (1).
void BM_CodecConv(benchmark::State& state) {
  const int64_t block = state.range(0);
  const bool packed = state.range(1) != 0;
  constexpr int64_t kChannels[] = {768, 384, 192, 96}, kLength[] = {128, 640, 2560, 7680};
  const int64_t channels = kChannels[block], length = kLength[block], kernel = 7, dilation = 3;
  izwi::RandomWeights weights(3, at::kCPU);
  const izwi::Backend torch = izwi::Backend::reference(at::kCPU, at::kFloat);
  weights.set_backend(packed ? izwi::Backend::host() : torch);
  const izwi::CausalConv1d conv(weights, "conv", channels, channels, kernel, dilation);
  const at::Tensor x = at::randn({1, channels, length});
  at::Tensor carry = conv.initial_state(1, x.options());
  for (auto _ : state) benchmark::DoNotOptimize(conv.forward(x, carry).data_ptr<float>());
  set_flop_counter(state, 2.0 * channels * channels * kernel * length);
}

// The linear products of one Qwen3-TTS step's code predictor for `streams` frames at once, at the
// 0.6B model's shapes (hidden 1024, 5 layers of q/k/v 4096 and o 2048 -> 1024, gate/up 6144 and
// down 3072 -> 1024, one 2048-code head per codebook): 15 sub-steps, each through all 5 layers
// and its own head, `streams` tokens per product. Reports frames per second. Args: streams, bf16,
// packed.
void BM_CodePredictorProducts(benchmark::State& state) {
  const int64_t streams = state.range(0);
  const bool bf16 = state.range(1) != 0, packed = state.range(2) != 0;
  constexpr int64_t kHidden = 1024, kLayers = 5, kSubSteps = 15;
  std::vector<BenchWeight> layers, heads;
  for (int64_t l = 0; l < kLayers; ++l) {
    layers.emplace_back(4096, kHidden, bf16, packed);
    layers.emplace_back(kHidden, 2048, bf16, packed);
    layers.emplace_back(6144, kHidden, bf16, packed);
    layers.emplace_back(kHidden, 3072, bf16, packed);
  }
  for (int64_t k = 0; k < kSubSteps; ++k) heads.emplace_back(2048, kHidden, bf16, packed);
  std::vector<at::Tensor> inputs, outputs;
  for (const BenchWeight& w : layers) {
    inputs.push_back(at::randn({streams, w.in}));
    outputs.push_back(at::empty({streams, w.out}));
  }
  const at::Tensor head_input = at::randn({streams, kHidden});
  at::Tensor logits = at::empty({streams, 2048});
  double flop = 0;
  for (const BenchWeight& w : layers) flop += 2.0 * streams * w.in * w.out * kSubSteps;
  flop += 2.0 * streams * kHidden * 2048 * kSubSteps;
  for (auto _ : state) {
    for (int64_t k = 0; k < kSubSteps; ++k) {
      for (size_t i = 0; i < layers.size(); ++i) layers[i].apply(inputs[i], outputs[i]);
      heads[static_cast<size_t>(k)].apply(head_input, logits);
    }
    benchmark::DoNotOptimize(logits.data_ptr<float>());
  }
  state.counters["frames/s"] =
      benchmark::Counter(static_cast<double>(streams * state.iterations()), benchmark::Counter::kIsRate);
  set_flop_counter(state, flop);
}

// The streaming read bandwidth izwi-bench divides by (1 GiB, all threads).
void BM_ReadBandwidth(benchmark::State& state) {
  double gbps = 0;
  for (auto _ : state) gbps = izwi::measure_read_bandwidth_gbps();
  state.counters["GB/s"] = gbps;
}

// Runs a benchmark body on `threads` OpenMP threads, then restores the process's count.
class ScopedThreads {
 public:
  explicit ScopedThreads(int threads) : saved_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~ScopedThreads() { at::set_num_threads(saved_); }
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

// The FMA peak izwi-bench and izwi-tts-bench divide by, on `threads` threads (Arg; 0 = all):
// one thread against all of them says whether this machine's vCPUs add up to whole cores.
void BM_FmaPeak(benchmark::State& state) {
  const ScopedThreads threads(state.range(0) > 0 ? static_cast<int>(state.range(0)) : at::get_num_threads());
  double gflops = 0;
  for (auto _ : state) gflops = izwi::measure_fma_peak_gflops();
  state.counters["GFLOP/s"] = gflops;
}

// The same packed product per thread on 1 and on more threads: Args rows per thread, in, tokens,
// bf16, threads (out = rows x threads). With whole cores the time stays the same and GFLOP/s grows
// with the threads; "per thread" says how much of one thread's rate each keeps.
void BM_LinearPerThread(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(4));
  const ScopedThreads scoped(threads);
  const int64_t out = state.range(0) * threads, in = state.range(1), tokens = state.range(2);
  const BenchWeight w(out, in, state.range(3) != 0, true);
  const at::Tensor x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    w.apply(x, y);
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  const double flop = 2.0 * out * in * tokens;
  set_flop_counter(state, flop);
  state.counters["GFLOP/s per thread"] =
      benchmark::Counter(flop * static_cast<double>(state.iterations()) / 1e9 / threads, benchmark::Counter::kIsRate);
}

void BM_LinearTorch(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const at::Tensor x = at::randn({tokens, in});
  const at::Tensor w = at::randn({out, in}) * 0.02;
  for (auto _ : state) benchmark::DoNotOptimize(at::linear(x, w));
  set_byte_counter(state, static_cast<double>(w.numel() * 4));
  set_flop_counter(state, 2.0 * out * in * tokens);
}

void shapes(benchmark::internal::Benchmark* b, bool with_format) {
  for (auto [out, in] : {std::pair<int64_t, int64_t>{1280, 768}, {4096, 768}, {768, 2048}, {32000, 768}}) {
    for (int64_t tokens : {1, 4, 16, 64, 512}) {
      if (with_format) {
        for (int64_t packed : {0, 1}) {
          b->Args({out, in, tokens, 0, packed});
          b->Args({out, in, tokens, 1, packed});
        }
      } else {
        b->Args({out, in, tokens});
      }
    }
  }
}

// The read probe's loop over 384 MiB in chunks of `KiB`, one fork/join per chunk (each thread a
// contiguous half), as a decode step streams its matrices one product at a time: what the start
// and end of each product cost a pure stream. Arg: chunk KiB.
void BM_ReadInChunks(benchmark::State& state) {
  const int64_t chunk = state.range(0) << 8, total = int64_t{384} << 18;  // floats
  const at::Tensor buffer = at::ones({total}, at::kFloat);
  const float* data = buffer.data_ptr<float>();
  std::atomic<int64_t> sink{0};
  for (auto _ : state) {
    for (int64_t c0 = 0; c0 < total; c0 += chunk) {
      at::parallel_for(c0, std::min(total, c0 + chunk), (chunk + 1) / 2, [&](int64_t begin, int64_t end) {
        sink += static_cast<int64_t>(izwi::sum_floats(data, begin, end));
      });
    }
  }
  benchmark::DoNotOptimize(sink.load());
  set_byte_counter(state, static_cast<double>(total * static_cast<int64_t>(sizeof(float))));
}

// The linear products of one qwen3-0.6b decode step at batch 1 (bf16 weights, packed): per layer
// q/k/v 4096 x 1024, o 1024 x 2048, gate/up 6144 x 1024, down 1024 x 3072, 28 layers, then the
// tied head 151936 x 1024; 1192 MB, the bytes izwi-bench divides by. izwi-bench's linear time per
// step minus this one is what the engine adds around the same calls.
void BM_Qwen3DecodeLinears(benchmark::State& state) {
  constexpr int64_t kShapes[4][2] = {{4096, 1024}, {1024, 2048}, {6144, 1024}, {1024, 3072}};
  std::vector<BenchWeight> weights;
  for (int layer = 0; layer < 28; ++layer) {
    for (const auto& shape : kShapes) weights.emplace_back(shape[0], shape[1], true, true);
  }
  weights.emplace_back(151936, 1024, true, true);
  const at::Tensor x = at::randn({1, 6144});
  at::Tensor y = at::empty({1, 151936});
  int64_t bytes = 0;
  for (const BenchWeight& w : weights) bytes += w.bytes();
  for (auto _ : state) {
    for (const BenchWeight& w : weights) w.apply(x, y);  // reads the first w.in inputs
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  set_byte_counter(state, static_cast<double>(bytes));
}

// One OpenMP fork/join with no work in it: what each parallel kernel of a step pays to start its
// threads and wait for the last one, the cost that fusing two kernels into one region saves.
void BM_ForkJoin(benchmark::State& state) {
  const int64_t threads = at::get_num_threads();
  std::atomic<int64_t> sink{0};
  for (auto _ : state) {
    at::parallel_for(0, threads, 1, [&](int64_t begin, int64_t end) { sink.fetch_add(end - begin); });
  }
  benchmark::DoNotOptimize(sink.load());
}

void BM_RmsNorm(benchmark::State& state) {
  const int64_t rows = state.range(0), dim = 2048;
  const at::Tensor x = at::randn({rows, dim}), w = at::randn({dim});
  at::Tensor y = at::empty_like(x);
  for (auto _ : state)
    izwi::rms_norm_cpu(x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), rows, dim, 1e-5f);
  state.SetItemsProcessed(state.iterations() * rows * dim);
}

void BM_Rope(benchmark::State& state) {
  const int64_t tokens = state.range(0), heads = 32, head_dim = 64;
  at::Tensor x = at::randn({tokens, heads, head_dim});
  const at::Tensor c = at::randn({4096, head_dim / 2}), s = at::randn({4096, head_dim / 2});
  const at::Tensor pos = at::arange(tokens, at::kLong);
  for (auto _ : state) {
    izwi::rope_cpu(x.data_ptr<float>(), pos.data_ptr<int64_t>(), c.data_ptr<float>(), s.data_ptr<float>(), tokens,
                   heads, head_dim);
  }
  state.SetItemsProcessed(state.iterations() * tokens * heads * head_dim);
}

void BM_SiluMul(benchmark::State& state) {
  const int64_t tokens = state.range(0), width = 8192;
  const at::Tensor gate_up = at::randn({tokens, 2 * width});
  at::Tensor out = at::empty({tokens, width});
  for (auto _ : state) izwi::silu_mul_cpu(gate_up.data_ptr<float>(), out.data_ptr<float>(), tokens, width);
  state.SetItemsProcessed(state.iterations() * tokens * width);
}

// The fused pass from qwen3-0.6b's QKV projection to its attention (per-head q/k norm, RoPE, K/V
// writes) for `tokens` decode tokens whose slots are spread over a float32 pool of 1024 blocks
// of 16, as in a 64-request decode step.
void BM_AttentionInputs(benchmark::State& state) {
  const int64_t tokens = state.range(0), heads = 16, kv_heads = 8, head_dim = 128, slots = 1024 * 16;
  const at::Tensor qkv = at::randn({tokens, (heads + 2 * kv_heads) * head_dim});
  const at::Tensor norm = at::rand({head_dim}), c = at::randn({4096, head_dim / 2}),
                   s = at::randn({4096, head_dim / 2});
  const at::Tensor positions = at::full({tokens}, 150, at::kLong);
  const at::Tensor slot = at::arange(tokens, at::kLong) * (slots / tokens);
  at::Tensor keys = at::zeros({slots, kv_heads, head_dim}), values = at::zeros_like(keys);
  at::Tensor q = at::empty({tokens, heads, head_dim});
  izwi::AttentionInputsParams params;
  params.q_norm = norm.data_ptr<float>();
  params.k_norm = norm.data_ptr<float>();
  params.eps = 1e-6f;
  params.positions = positions.data_ptr<int64_t>();
  params.cos = c.data_ptr<float>();
  params.sin = s.data_ptr<float>();
  params.slots = slot.data_ptr<int64_t>();
  const izwi::AttentionInputsShape shape{tokens, heads, kv_heads, head_dim, qkv.size(1)};
  for (auto _ : state) {
    izwi::attention_inputs_cpu(qkv.data_ptr<float>(), shape, params, q.data_ptr<float>(), keys.data_ptr<float>(),
                               values.data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * tokens * (heads + 2 * kv_heads) * head_dim);
}

// A 64-request step's rows of Qwen3 logits through the sampling dispatch point, greedy (0) or at
// temperature 0.7 (1): the rows spread over the threads. Each iteration restores the logits.
void BM_SampleRows(benchmark::State& state) {
  constexpr int64_t kRows = 64, kVocab = 151936;
  const at::Tensor pristine = at::randn({kRows, kVocab}) * 4;
  at::Tensor logits = at::empty_like(pristine);
  std::vector<izwi::SamplingState> states(kRows);
  std::vector<izwi::SamplingState*> rows;
  for (int64_t r = 0; r < kRows; ++r) {
    states[r].temperature = state.range(0) == 0 ? 0.0f : 0.7f;
    states[r].reseed(static_cast<uint64_t>(r));
    rows.push_back(&states[r]);
  }
  izwi::Sampler sampler;
  for (auto _ : state) {
    logits.copy_(pristine);
    benchmark::DoNotOptimize(sampler.sample_rows(logits, rows, izwi::Backend::host()));
  }
}

// Paged attention for `seqs` sequences of `context` cached positions whose last `rows` positions
// are the queries, with the 100m preset's heads (12 query, 4 KV, 64 wide) or, with a third argument
// of 1, qwen3-0.6b's (16, 8, 128); a fourth argument of 1 keeps the pools in bf16
// (EngineConfig::kv_cache_dtype), a fifth of 1 scatters the blocks over a larger pool; a sixth gives
// the number of layers, each with its own pools, attended in turn: beyond one, nothing of a layer's
// pools is left in L3 when its turn comes again, as in a decode step (one layer's pools at 64 x 160
// positions, 84 MB in float32, are partly cached between iterations).
void paged_attention_bench(benchmark::State& state, int64_t rows, bool sdpa = false) {
  const int64_t seqs = state.range(0), context = state.range(1);
  const bool qwen = state.range(2) == 1, bf16 = state.range(3) == 1;
  const int64_t heads = qwen ? 16 : 12, kv_heads = qwen ? 8 : 4, head_dim = qwen ? 128 : 64, block = 16;
  const int64_t blocks_per_seq = (context + block - 1) / block;
  const at::ScalarType pool_type = bf16 ? at::kBFloat16 : at::kFloat;
  // Scattered: the blocks lie at random over a pool 8 times as large, as an engine's allocator
  // leaves them once requests have come and gone; otherwise each sequence's blocks are adjacent.
  const int64_t pool_blocks = (state.range(4) == 1 ? 8 : 1) * seqs * blocks_per_seq;
  const int64_t layers = state.range(5);
  std::vector<at::Tensor> key_pools, value_pools;
  for (int64_t l = 0; l < layers; ++l) {
    key_pools.push_back(at::randn({pool_blocks, block, kv_heads, head_dim}).to(pool_type));
    value_pools.push_back(at::randn_like(key_pools.back()));
  }
  std::vector<int32_t> placement(static_cast<size_t>(pool_blocks));
  std::iota(placement.begin(), placement.end(), 0);
  if (state.range(4) == 1) std::shuffle(placement.begin(), placement.end(), std::mt19937(7));
  const at::Tensor q = at::randn({seqs * rows, heads, head_dim});
  at::Tensor out = at::empty_like(q);
  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(seqs));
  std::vector<izwi::SeqSlice> slices;
  for (int64_t s = 0; s < seqs; ++s) {
    for (int64_t b = 0; b < blocks_per_seq; ++b)
      tables[s].push_back(placement[static_cast<size_t>(s * blocks_per_seq + b)]);
    izwi::SeqSlice slice;
    slice.offset = s * rows;
    slice.length = rows;
    slice.start_pos = context - rows;
    slice.block_table = &tables[s];
    slices.push_back(slice);
  }
  const izwi::PagedAttentionShape shape{heads, kv_heads, head_dim, block};
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
  for (auto _ : state) {
    for (int64_t l = 0; l < layers; ++l) {
      const at::Tensor &keys = key_pools[l], &values = value_pools[l];
      if (sdpa) {
        izwi::ops::prefill_attention(q, keys, values, slices, block, scale, 0, 0, out);
      } else if (bf16) {
        izwi::paged_attention_cpu(q.data_ptr<float>(), static_cast<const uint16_t*>(keys.data_ptr()),
                                  static_cast<const uint16_t*>(values.data_ptr()), out.data_ptr<float>(), slices, shape,
                                  scale);
      } else {
        izwi::paged_attention_cpu(q.data_ptr<float>(), keys.data_ptr<float>(), values.data_ptr<float>(),
                                  out.data_ptr<float>(), slices, shape, scale);
      }
    }
  }
  set_byte_counter(state, static_cast<double>(layers * seqs * context * kv_heads * head_dim * 2 *
                                              static_cast<int64_t>(key_pools[0].element_size())));
}

// Decode: one query per sequence (Args as paged_attention_bench's).
void BM_PagedAttentionDecode(benchmark::State& state) { paged_attention_bench(state, 1); }

// A prefill chunk: every position of each sequence is a query, as a prompt's prefill attends
// (causal; Args as paged_attention_bench's). The rows reread their head's keys and values from
// L2, so this is the attention's arithmetic rather than its reads.
void BM_PagedAttentionPrefill(benchmark::State& state) { paged_attention_bench(state, state.range(1)); }

// The same chunks through ops::prefill_attention (libtorch's scaled_dot_product_attention over the
// gathered K/V; q and the output float32): whether the CPU should route long chunks there too.
void BM_PrefillAttentionSdpa(benchmark::State& state) { paged_attention_bench(state, state.range(1), true); }

// One row of logits over Qwen3's 151,936 ids (normal, standard deviation 4: a few ids carry most of
// the mass) through the host sampler: greedy (0), temperature 0.7 (1), with top-p 0.9 (2), with
// top-k 50 (3). Each iteration restores the logits first (the sampler scales them in place).
void BM_SampleRow(benchmark::State& state) {
  constexpr int32_t kVocab = 151936;
  const at::Tensor pristine = at::randn({kVocab}) * 4;
  std::vector<float> logits(kVocab);
  izwi::Sampler sampler;
  izwi::SamplingState s;
  s.temperature = state.range(0) == 0 ? 0.0f : 0.7f;
  s.top_p = state.range(0) == 2 ? 0.9f : 1.0f;
  s.top_k = state.range(0) == 3 ? 50 : 0;
  s.reseed(1);
  for (auto _ : state) {
    std::copy_n(pristine.data_ptr<float>(), kVocab, logits.data());
    benchmark::DoNotOptimize(sampler.sample(logits.data(), kVocab, s));
  }
}

}  // namespace

BENCHMARK(BM_Linear)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, true); })->UseRealTime();
// Products whose weights stay in L2 (0.5-1.5 MB over two cores): what each product pays besides its
// multiplications (arranging the inputs, the fork and join) shows here, as in the speech models'
// small products.
BENCHMARK(BM_Linear)
    ->Name("BM_LinearInL2")
    ->ArgsProduct({{512}, {768}, {16, 64}, {0, 1}, {1}})
    ->ArgsProduct({{1024}, {256}, {16, 64}, {0, 1}, {1}})
    ->UseRealTime();
BENCHMARK(BM_ArrangeInputs)->ArgsProduct({{16, 64}, {768, 2048}, {0, 1}})->UseRealTime();
BENCHMARK(BM_LinearStackFromDram)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int64_t packed : {0, 1}) {
        for (int64_t tokens : {1, 16}) {
          b->Args({32, 2048, 2048, 0, packed, tokens});
          b->Args({32, 2048, 2048, 1, packed, tokens});
        }
      }
      b->Args({192, 1024, 1024, 1, 1, 1});
      b->Args({64, 3072, 1024, 1, 1, 1});
      b->Args({64, 1024, 3072, 1, 1, 1});
      b->Args({1, 151936, 1024, 1, 1, 1});  // qwen3-0.6b's head: one 311 MB stream per thread pair
    })
    ->UseRealTime();
// 256 MB of bf16 and the same matrices in int8 / int4: bytes per second should stay near the read
// probe's, so tokens/s rises as the bytes fall.
BENCHMARK(BM_QuantLinearStackFromDram)->ArgsProduct({{64}, {2048}, {1024}, {0, 1, 2}, {1, 4}})->UseRealTime();
BENCHMARK(BM_CodecTransposedConv)->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->UseRealTime();
BENCHMARK(BM_CodecConv)->ArgsProduct({{0, 1, 2, 3}, {0, 1}})->UseRealTime();
BENCHMARK(BM_CodePredictorProducts)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int64_t packed : {0, 1}) {
        for (int64_t streams : {1, 16}) {
          b->Args({streams, 0, packed});
          b->Args({streams, 1, packed});
        }
      }
    })
    ->UseRealTime();
BENCHMARK(BM_ReadInChunks)->Arg(2048)->Arg(6144)->Arg(12288)->Arg(393216)->UseRealTime();
BENCHMARK(BM_Qwen3DecodeLinears)->UseRealTime();
BENCHMARK(BM_ReadBandwidth)->UseRealTime()->Iterations(5);
BENCHMARK(BM_FmaPeak)->Arg(0)->Arg(1)->UseRealTime()->Iterations(3);
// 256 x 256 per thread: 256 KiB of float32 weights, in each core's L2 (512 KiB and up).
BENCHMARK(BM_LinearPerThread)->ArgsProduct({{256}, {256}, {16, 64}, {0, 1}, {1, 2}})->UseRealTime();
BENCHMARK(BM_LinearTorch)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, false); })->UseRealTime();
BENCHMARK(BM_SampleRow)->DenseRange(0, 3)->UseRealTime();
BENCHMARK(BM_SampleRows)->DenseRange(0, 1)->UseRealTime();
BENCHMARK(BM_ForkJoin)->UseRealTime();
BENCHMARK(BM_RmsNorm)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_Rope)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_SiluMul)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_AttentionInputs)->Arg(1)->Arg(16)->Arg(64)->UseRealTime();
BENCHMARK(BM_PagedAttentionDecode)
    ->Args({1, 256, 0, 0, 0, 1})
    ->Args({16, 256, 0, 0, 0, 1})
    ->Args({16, 1024, 0, 0, 0, 1})
    ->Args({64, 256, 0, 0, 0, 1})
    ->Args({1, 2048, 0, 0, 0, 1})
    ->Args({16, 160, 1, 0, 0, 1})
    ->Args({16, 1024, 1, 0, 0, 1})
    ->Args({16, 1024, 1, 1, 0, 1})
    ->Args({64, 160, 1, 0, 0, 1})
    ->Args({64, 160, 1, 1, 0, 1})
    ->Args({64, 160, 1, 0, 1, 1})
    ->Args({64, 160, 1, 1, 1, 1})
    ->Args({64, 160, 1, 0, 0, 12})
    ->Args({64, 160, 1, 1, 0, 12})
    ->UseRealTime();
BENCHMARK(BM_PagedAttentionPrefill)->ArgsProduct({{1}, {512}, {0, 1}, {0, 1}, {0}, {1}})->UseRealTime();
BENCHMARK(BM_PrefillAttentionSdpa)->ArgsProduct({{1}, {512}, {0, 1}, {0, 1}, {0}, {1}})->UseRealTime();

int main(int argc, char** argv) {
  at::set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
