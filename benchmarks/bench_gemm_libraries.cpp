// izwi's linear kernels beside the libraries Debian packages for the same job, on the shapes of
// the 100m preset's decode and prefill, in one run: izwi's packed panel kernel, izwi's row-major
// kernel (streaming GEMV up to 16 tokens, Eigen past it), Eigen's GEMM on all threads, oneDNN's
// matmul with weights prepacked by oneDNN (float32; and bf16 x bf16 -> float32, the avx512_bf16
// dot products, which rounds the inputs to bf16), and libxsmm's JIT small-GEMM kernels over
// 64-row blocks of the output. oneDNN and libxsmm are optional: without libdnnl-dev and
// libxsmm-dev their benchmarks are not compiled. Args: out, in, tokens.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <thread>
#include <vector>

#include "kernels/cpu/linear_cpu.h"
#include "kernels/cpu/panel_linear_cpu.h"

#if IZWI_BENCH_DNNL
#include <dnnl.hpp>
#endif
#if IZWI_BENCH_LIBXSMM
#include <libxsmm.h>
#endif

namespace {

using izwi::WeightFormat;

void finish(benchmark::State& state, int64_t out, int64_t in, int64_t tokens) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * out * in * tokens * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

void BM_IzwiPacked(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const at::Tensor w = at::randn({out, in}) * 0.02, x = at::randn({tokens, in});
  at::Tensor packed = at::empty({izwi::packed_elements(out, in, WeightFormat::F32)}), y = at::empty({tokens, out});
  izwi::pack_panels(w.data_ptr(), WeightFormat::F32, out, in, packed.data_ptr());
  for (auto _ : state) {
    izwi::linear_packed_cpu(x.data_ptr<float>(), tokens, in, packed.data_ptr(), WeightFormat::F32, out, nullptr,
                            y.data_ptr<float>());
  }
  finish(state, out, in, tokens);
}

void BM_IzwiRows(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const at::Tensor w = at::randn({out, in}) * 0.02, x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  for (auto _ : state) {
    izwi::linear_cpu(x.data_ptr<float>(), tokens, in, w.data_ptr(), WeightFormat::F32, out, nullptr,
                     y.data_ptr<float>());
  }
  finish(state, out, in, tokens);
}

void BM_Eigen(benchmark::State& state) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  Eigen::setNbThreads(at::get_num_threads());
  const RowMajor w = RowMajor::Random(out, in), x = RowMajor::Random(tokens, in);
  RowMajor y(tokens, out);
  for (auto _ : state) {
    y.noalias() = x * w.transpose();
    benchmark::DoNotOptimize(y.data());
  }
  finish(state, out, in, tokens);
}

#if IZWI_BENCH_DNNL
// Args: out, in, tokens, bf16 (src and weights bf16, destination float32).
void BM_OneDnn(benchmark::State& state) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  const dt type = state.range(3) != 0 ? dt::bf16 : dt::f32;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dnnl::memory::desc src({tokens, in}, type, tag::ab), weights({in, out}, type, tag::any),
      dst({tokens, out}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), engine);
  } catch (const dnnl::error& e) {
    state.SkipWithError(e.what());
    return;
  }
  // Weights [out, in] row-major are [in, out] in oneDNN's column order (tag ba); reordered once.
  std::vector<float> w(static_cast<size_t>(out * in)), x(static_cast<size_t>(tokens * in)),
      y(static_cast<size_t>(tokens * out));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.01f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) * 0.1f;
  dnnl::memory w_f32({{in, out}, dt::f32, tag::ba}, engine, w.data()),
      x_f32({{tokens, in}, dt::f32, tag::ab}, engine, x.data());
  dnnl::memory w_packed(pd.weights_desc(), engine), x_src(src, engine), y_dst(dst, engine, y.data());
  dnnl::reorder(w_f32, w_packed).execute(stream, w_f32, w_packed);
  dnnl::reorder(x_f32, x_src).execute(stream, x_f32, x_src);
  const dnnl::matmul matmul(pd);
  for (auto _ : state) {
    if (type == dt::bf16) dnnl::reorder(x_f32, x_src).execute(stream, x_f32, x_src);  // the inputs arrive as float32
    matmul.execute(stream, {{DNNL_ARG_SRC, x_src}, {DNNL_ARG_WEIGHTS, w_packed}, {DNNL_ARG_DST, y_dst}});
    stream.wait();
  }
  finish(state, out, in, tokens);
}
#endif

#if IZWI_BENCH_LIBXSMM
// Column-major Y^T [out, tokens] = W [out, in] (stored transposed, once) x X^T [in, tokens], one
// JIT kernel per 64-row block of the output, the blocks split over the threads.
void BM_Libxsmm(benchmark::State& state) {
  const int64_t out = state.range(0), in = state.range(1), tokens = state.range(2);
  constexpr libxsmm_blasint kBlock = 64;
  libxsmm_init();
  const at::Tensor wt = (at::randn({out, in}) * 0.02).t().contiguous(), x = at::randn({tokens, in});
  at::Tensor y = at::empty({tokens, out});
  const libxsmm_blasint lda = out, ldb = in, ldc = out;
  const float alpha = 1, beta = 0;
  const int flags = LIBXSMM_GEMM_FLAG_NONE;
  const libxsmm_smmfunction kernel =
      libxsmm_smmdispatch(kBlock, tokens, in, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
  if (kernel == nullptr || out % kBlock != 0) {
    state.SkipWithError("no libxsmm kernel for this shape");
    return;
  }
  for (auto _ : state) {
    at::parallel_for(0, out / kBlock, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        kernel(wt.data_ptr<float>() + b * kBlock, x.data_ptr<float>(), y.data_ptr<float>() + b * kBlock);
      }
    });
  }
  finish(state, out, in, tokens);
}
#endif

void shapes(benchmark::internal::Benchmark* b) {
  for (auto [out, in] : {std::pair<int64_t, int64_t>{1280, 768}, {4096, 768}, {768, 2048}, {32000, 768}}) {
    for (int64_t tokens : {1, 4, 16, 64, 512}) b->Args({out, in, tokens});
  }
}

}  // namespace

BENCHMARK(BM_IzwiPacked)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_IzwiRows)->Apply(shapes)->UseRealTime();
BENCHMARK(BM_Eigen)->Apply(shapes)->UseRealTime();
#if IZWI_BENCH_DNNL
BENCHMARK(BM_OneDnn)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int64_t bf16 : {0, 1}) {
        for (auto [out, in] : {std::pair<int64_t, int64_t>{1280, 768}, {4096, 768}, {768, 2048}, {32000, 768}}) {
          for (int64_t tokens : {1, 4, 16, 64, 512}) b->Args({out, in, tokens, bf16});
        }
      }
    })
    ->UseRealTime();
#endif
#if IZWI_BENCH_LIBXSMM
BENCHMARK(BM_Libxsmm)->Apply(shapes)->UseRealTime();
#endif

int main(int argc, char** argv) {
  at::set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
