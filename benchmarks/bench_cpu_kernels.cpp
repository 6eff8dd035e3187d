// Micro-benchmarks of the CPU kernels. Linear layers report the weight bytes streamed per
// second (compare with izwi-bench's read bandwidth); the rest report items per second.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <thread>
#include <vector>

#include "kernels/cpu/fma_peak.h"
#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/paged_attention_cpu.h"
#include "kernels/cpu/rms_norm_cpu.h"
#include "kernels/cpu/rope_cpu.h"
#include "kernels/cpu/silu_mul_cpu.h"

namespace {

using izwi::WeightFormat;

// Args: out, in, tokens, bf16
void BM_Linear(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const bool bf16 = state.range(3) != 0;
  const at::Tensor x = at::randn({tokens, in});
  const at::Tensor w = (at::randn({out, in}) * 0.02).to(bf16 ? at::kBFloat16 : at::kFloat);
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    izwi::linear_cpu(x.data_ptr<float>(), tokens, in, w.data_ptr(), bf16 ? WeightFormat::BF16 : WeightFormat::F32, out,
                     nullptr, y.data_ptr<float>());
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  state.SetBytesProcessed(state.iterations() * w.numel() * static_cast<int64_t>(w.element_size()));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * out * in * tokens * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

// One token through a stack of `layers` distinct [out, in] matrices, 256 MB and more in total:
// every byte comes from DRAM, as in a decode step. Args: layers, out, in, bf16.
void BM_LinearStackFromDram(benchmark::State& state) {
  const int64_t layers = state.range(0), out = state.range(1), in = state.range(2);
  const bool bf16 = state.range(3) != 0;
  std::vector<at::Tensor> weights;
  for (int64_t l = 0; l < layers; ++l)
    weights.push_back((at::randn({out, in}) * 0.02).to(bf16 ? at::kBFloat16 : at::kFloat));
  const at::Tensor x = at::randn({1, in});
  at::Tensor y = at::empty({1, out});
  for (auto _ : state) {
    for (const at::Tensor& w : weights) {
      izwi::linear_cpu(x.data_ptr<float>(), 1, in, w.data_ptr(), bf16 ? WeightFormat::BF16 : WeightFormat::F32, out,
                       nullptr, y.data_ptr<float>());
    }
    benchmark::DoNotOptimize(y.data_ptr<float>());
  }
  state.SetBytesProcessed(state.iterations() * layers * weights[0].numel() *
                          static_cast<int64_t>(weights[0].element_size()));
}

// The streaming read bandwidth izwi-bench divides by (1 GiB, all threads).
void BM_ReadBandwidth(benchmark::State& state) {
  double gbps = 0;
  for (auto _ : state) gbps = izwi::measure_read_bandwidth_gbps();
  state.counters["GB/s"] = gbps;
}

// The FMA peak izwi-tts-bench divides by (all threads).
void BM_FmaPeak(benchmark::State& state) {
  double gflops = 0;
  for (auto _ : state) gflops = izwi::measure_fma_peak_gflops();
  state.counters["GFLOP/s"] = gflops;
}

void BM_LinearTorch(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const at::Tensor x = at::randn({tokens, in});
  const at::Tensor w = at::randn({out, in}) * 0.02;
  for (auto _ : state) benchmark::DoNotOptimize(at::linear(x, w));
  state.SetBytesProcessed(state.iterations() * w.numel() * 4);
}

void shapes(benchmark::internal::Benchmark* b, bool with_format) {
  for (auto [out, in] : {std::pair<int64_t, int64_t>{1280, 768}, {4096, 768}, {768, 2048}, {32000, 768}}) {
    for (int64_t tokens : {1, 4, 16, 64}) {
      if (with_format) {
        b->Args({out, in, tokens, 0});
        b->Args({out, in, tokens, 1});
      } else {
        b->Args({out, in, tokens});
      }
    }
  }
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

// Decode attention: `seqs` sequences, one query each, over `context` cached positions.
void BM_PagedAttentionDecode(benchmark::State& state) {
  const int64_t seqs = state.range(0), context = state.range(1);
  const int64_t heads = 12, kv_heads = 4, head_dim = 64, block = 16;
  const int64_t blocks_per_seq = (context + block - 1) / block;
  const at::Tensor keys = at::randn({seqs * blocks_per_seq, block, kv_heads, head_dim});
  const at::Tensor values = at::randn_like(keys);
  const at::Tensor q = at::randn({seqs, heads, head_dim});
  at::Tensor out = at::empty_like(q);
  std::vector<std::vector<int32_t>> tables(static_cast<size_t>(seqs));
  std::vector<izwi::SeqSlice> slices;
  for (int64_t s = 0; s < seqs; ++s) {
    for (int64_t b = 0; b < blocks_per_seq; ++b) tables[s].push_back(static_cast<int32_t>(s * blocks_per_seq + b));
    izwi::SeqSlice slice;
    slice.offset = s;
    slice.length = 1;
    slice.start_pos = context - 1;
    slice.block_table = &tables[s];
    slices.push_back(slice);
  }
  for (auto _ : state) {
    izwi::paged_attention_cpu(q.data_ptr<float>(), keys.data_ptr<float>(), values.data_ptr<float>(),
                              out.data_ptr<float>(), slices, {heads, kv_heads, head_dim, block}, 0.125f);
  }
  state.SetBytesProcessed(state.iterations() * seqs * context * kv_heads * head_dim * 2 * 4);
}

}  // namespace

BENCHMARK(BM_Linear)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, true); })->UseRealTime();
BENCHMARK(BM_LinearStackFromDram)->Args({32, 2048, 2048, 0})->Args({32, 2048, 2048, 1})->UseRealTime();
BENCHMARK(BM_ReadBandwidth)->UseRealTime()->Iterations(5);
BENCHMARK(BM_FmaPeak)->UseRealTime()->Iterations(3);
BENCHMARK(BM_LinearTorch)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, false); })->UseRealTime();
BENCHMARK(BM_RmsNorm)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_Rope)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_SiluMul)->Arg(1)->Arg(64)->UseRealTime();
BENCHMARK(BM_PagedAttentionDecode)->Args({1, 256})->Args({16, 256})->Args({64, 256})->Args({1, 2048})->UseRealTime();

int main(int argc, char** argv) {
  at::set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
