// Micro-benchmarks of the audio frontend, on one thread. Every case reports `audio_s/s`: seconds
// of audio processed per second of CPU time (the inverse of the real-time factor); CPU rather
// than wall time so that other work on a shared machine does not skew it.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "audio/log_mel.h"
#include "audio/streaming_log_mel.h"
#include "audio/streaming_resampler.h"
#include "izwi/audio.h"

namespace {

std::vector<float> test_signal(int rate, double seconds) {
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.3f * static_cast<float>(std::sin(2 * M_PI * 440 * i / rate) + 0.5 * std::sin(2 * M_PI * 3100 * i / rate));
  }
  return x;
}

void report_audio_rate(benchmark::State& state, double seconds) {
  state.counters["audio_s/s"] =
      benchmark::Counter(seconds * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Arg: seconds of 16 kHz audio.
void BM_LogMelOffline(benchmark::State& state) {
  std::vector<float> x = test_signal(16000, static_cast<double>(state.range(0)));
  const at::Tensor waveform = at::from_blob(x.data(), {static_cast<int64_t>(x.size())}, at::kFloat);
  for (auto _ : state) benchmark::DoNotOptimize(izwi::log_mel_spectrogram(waveform, izwi::LogMelConfig{}));
  report_audio_rate(state, static_cast<double>(state.range(0)));
}

// Arg: chunk in samples (1280 = 80 ms, one Voxtral position). 10 s of audio per iteration.
void BM_LogMelStreaming(benchmark::State& state) {
  const std::vector<float> x = test_signal(16000, 10.0);
  const auto chunk = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    izwi::StreamingLogMel streaming{izwi::LogMelConfig{}};
    for (size_t at = 0; at < x.size(); at += chunk) {
      benchmark::DoNotOptimize(streaming.push(x.data() + at, std::min(chunk, x.size() - at)));
    }
    benchmark::DoNotOptimize(streaming.finish());
  }
  report_audio_rate(state, 10.0);
}

// 10 s of 44.1 kHz audio to 16 kHz in one call.
void BM_Resample44k1To16k(benchmark::State& state) {
  const std::vector<float> x = test_signal(44100, 10.0);
  for (auto _ : state) benchmark::DoNotOptimize(izwi::resample(x, 44100, 16000));
  report_audio_rate(state, 10.0);
}

// The same streamed in chunks of Arg samples (3528 = 80 ms at 44.1 kHz).
void BM_Resample44k1To16kStreaming(benchmark::State& state) {
  const std::vector<float> x = test_signal(44100, 10.0);
  const auto chunk = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    izwi::StreamingResampler resampler(44100, 16000);
    for (size_t at = 0; at < x.size(); at += chunk) {
      benchmark::DoNotOptimize(resampler.push(x.data() + at, std::min(chunk, x.size() - at)));
    }
    benchmark::DoNotOptimize(resampler.flush());
  }
  report_audio_rate(state, 10.0);
}

}  // namespace

BENCHMARK(BM_LogMelOffline)->Arg(1)->Arg(30)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LogMelStreaming)->Arg(1280)->Arg(16000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resample44k1To16k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resample44k1To16kStreaming)->Arg(3528)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  // One thread: the frontend's ops are small and run beside the model; figures then do not
  // depend on how busy the machine's other cores are.
  at::set_num_threads(1);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
