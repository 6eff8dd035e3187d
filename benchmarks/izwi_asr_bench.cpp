// izwi-asr-bench: how many live transcription streams this machine serves in real time.
//
//   izwi-asr-bench --model DIR [--streams 1,2,4,8,16] [--seconds 10] [--chunk-ms 80]
//                  [--pad-id 32] [--weight-dtype auto|bfloat16] [--json]
//
// For each stream count N, N producer threads push synthetic audio at the audio's own pace in
// --chunk-ms chunks while the engine decodes all streams together. A token's latency is the time
// from the arrival of the last sample its position needs to the token's delivery. N streams are
// "real time" when the p99 latency stays under one second and every stream ends within a second of
// its audio. With --json the last line is {"results":[{"streams","latency_p50_ms",...}],
// "max_realtime_streams"}.

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "izwi/engine.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kSamplesPerPosition = 1280;  // 80 ms at 16 kHz
constexpr int32_t kStftLookahead = 200;        // a centered 400-sample window needs 200 samples ahead

struct StreamResult {
  std::vector<double> latencies_ms;
  double end_lag_ms = 0;  ///< Last token after the audio's end.
};

std::vector<float> synthetic_audio(size_t samples, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> audio(samples);
  for (size_t i = 0; i < samples; ++i) {
    audio[i] = 0.3f * std::sin(2.0f * 3.14159265f * 220.0f * static_cast<float>(i) / 16000.0f) + noise(rng);
  }
  return audio;
}

// One stream: a producer thread pushes the audio in real time while this thread reads tokens.
// Errors on either side (an invalid pad id, a failed step) are rethrown here, after the producer
// has stopped, so the caller can report them; nothing escapes a thread.
StreamResult run_stream(izwi::Engine& engine, const std::vector<float>& audio, size_t chunk, int32_t pad_id,
                        Clock::time_point start) {
  izwi::TranscriptionOptions options;
  options.pad_token_id = pad_id;
  options.sampling.temperature = 0.0f;  // greedy, whatever the folder's generation_config.json says
  izwi::TranscriptionStream stream = engine.start_transcription(options);
  const int32_t rate = engine.model_info().audio_sample_rate;
  const int32_t prompt_len = 1 + (options.delay_tokens >= 0 ? options.delay_tokens : 6);

  std::mutex mutex;
  std::vector<std::pair<size_t, Clock::time_point>> arrivals;  // samples pushed so far, when
  std::atomic<bool> stop{false};
  std::exception_ptr producer_error;
  std::thread producer([&] {
    try {
      for (size_t pos = 0; pos < audio.size() && !stop; pos += chunk) {
        std::this_thread::sleep_until(start + std::chrono::duration<double>(double(pos + chunk) / rate));
        const size_t n = std::min(chunk, audio.size() - pos);
        stream.push_audio(audio.data() + pos, n, rate);
        std::lock_guard<std::mutex> lock(mutex);
        arrivals.emplace_back(pos + n, Clock::now());
      }
      stream.finish_audio();
    } catch (...) {
      producer_error = std::current_exception();
      stream.abort();  // ends the reader's loop
    }
  });

  StreamResult result;
  size_t generated = 0;
  Clock::time_point last_token = start;
  std::exception_ptr reader_error;
  try {
    while (std::optional<izwi::StreamChunk> piece = stream.next()) {
      const Clock::time_point now = Clock::now();
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = 0; i < piece->tokens.size(); ++i, ++generated) {
        // The token sampled at position prompt_len - 1 + g needs the audio of that position.
        const size_t needed = (prompt_len + generated) * kSamplesPerPosition + kStftLookahead;
        auto arrived = std::find_if(arrivals.begin(), arrivals.end(), [&](const auto& a) { return a.first >= needed; });
        const Clock::time_point at =
            arrived == arrivals.end() ? (arrivals.empty() ? start : arrivals.back().second) : arrived->second;
        result.latencies_ms.push_back(std::chrono::duration<double, std::milli>(now - at).count());
        last_token = now;
      }
    }
  } catch (...) {
    reader_error = std::current_exception();
    stop = true;
  }
  producer.join();
  if (reader_error) std::rethrow_exception(reader_error);  // the cause; the producer may then fail as Aborted
  if (producer_error) std::rethrow_exception(producer_error);
  const auto audio_end = start + std::chrono::duration<double>(double(audio.size()) / rate);
  result.end_lag_ms = std::chrono::duration<double, std::milli>(last_token - audio_end).count();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Concurrent real-time transcription streams with izwi"};
  std::string streams_list = "1,2,4,8,16";
  double seconds = 10, chunk_ms = 80;
  int32_t pad_id = 32;
  izwi::EngineConfig config;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "Speech model folder"});
  app.add_option("--streams", streams_list, "Stream counts to try")->capture_default_str();
  app.add_option("--seconds", seconds, "Audio per stream")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--chunk-ms", chunk_ms, "Push size")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--pad-id", pad_id, "Streaming pad token id")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const std::string& model_dir = shared.model;
  const bool json = shared.json;  // ends the report with one JSON summary line

  return izwi::cli::run_main("izwi-asr-bench", [&] {
    const std::vector<int32_t> stream_counts = izwi::cli::parse_id_list(streams_list, "--streams");
    config.max_batch_size = *std::max_element(stream_counts.begin(), stream_counts.end());
    izwi::cli::apply_shared_engine_options(shared, config);  // --device ... --threads, -v / -q
    izwi::Engine engine(model_dir, config);
    izwi::cli::require_model_use(engine.model_info(), model_dir, izwi::cli::ModelUse::Transcription);
    const int32_t rate = engine.model_info().audio_sample_rate;
    const size_t chunk = std::max<size_t>(1, static_cast<size_t>(chunk_ms * rate / 1000.0));
    const std::vector<float> audio = synthetic_audio(static_cast<size_t>(seconds * rate), 7);
    const int64_t resident_weight_bytes = engine.model_info().weight_bytes;  // audio encoder included
    fmt::print("{:.1f} MB of weights held\n", resident_weight_bytes / 1e6);

    fmt::print("{:>8} {:>14} {:>14} {:>14} {:>14} {:>10}\n", "streams", "latency p50 ms", "latency p90 ms",
               "latency p99 ms", "end lag ms", "real time");
    nlohmann::json results = nlohmann::json::array();
    int32_t max_realtime = 0;
    for (int32_t n : stream_counts) {
      const Clock::time_point start = Clock::now() + std::chrono::milliseconds(50);
      std::vector<StreamResult> per_stream(static_cast<size_t>(n));
      std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
      std::vector<std::thread> threads;
      for (int32_t i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
          try {
            per_stream[static_cast<size_t>(i)] = run_stream(engine, audio, chunk, pad_id, start);
          } catch (...) {  // an exception leaving a thread would abort the process
            errors[static_cast<size_t>(i)] = std::current_exception();
          }
        });
      }
      for (std::thread& t : threads) t.join();
      for (const std::exception_ptr& error : errors) {
        if (error) std::rethrow_exception(error);  // run_main reports it: "izwi-asr-bench: <kind>: <what>", exit 1
      }
      std::vector<double> latencies;
      double worst_end_lag = 0;
      for (const StreamResult& r : per_stream) {
        latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
        worst_end_lag = std::max(worst_end_lag, r.end_lag_ms);
      }
      const double p50 = izwi::cli::percentile(latencies, 0.5), p90 = izwi::cli::percentile(latencies, 0.9),
                   p99 = izwi::cli::percentile(latencies, 0.99);
      const bool realtime = p99 < 1000.0 && worst_end_lag < 1000.0;
      if (realtime) max_realtime = std::max(max_realtime, n);
      fmt::print("{:>8} {:>14.1f} {:>14.1f} {:>14.1f} {:>14.1f} {:>10}\n", n, p50, p90, p99, worst_end_lag,
                 realtime ? "yes" : "no");
      results.push_back({{"streams", n},
                         {"latency_p50_ms", p50},
                         {"latency_p90_ms", p90},
                         {"latency_p99_ms", p99},
                         {"end_lag_ms", worst_end_lag},
                         {"realtime", realtime}});
    }
    fmt::print("max real-time streams: {}\n", max_realtime);
    if (json) {
      std::cout << nlohmann::json{{"results", results},
                                  {"max_realtime_streams", max_realtime},
                                  {"resident_weight_bytes", resident_weight_bytes}}
                       .dump()
                << "\n";
    }
    return 0;
  });
}
