// izwi-audio-chat-bench: speech recognition and speech-to-speech chat throughput of an audio chat
// model (LFM2-Audio), measured in one run.
//
//   izwi-audio-chat-bench --model DIR [--concurrency 1,8] [--audio-seconds 4] [--items 36]
//                         [--threads N] [--json]
//
// Every request is one user turn of a synthetic voiced recording between fixed framing ids
// (token level: no tokenizer needed). ASR: one request at a time in sequential mode, 16 text
// items; its real-time factor is the request's wall time (audio encoding included) over the
// audio's length. Chat: `c` requests at once in interleaved mode with `--items` items each
// (6 text tokens and 12 frames in turn, greedy), streamed: frames/s of all streams, each stream's
// real-time factor (wall time / seconds of speech it produced, 80 ms per frame) and time to first
// audio (the first chunk with PCM, or with a frame when the folder has no codec).

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <future>
#include <iostream>
#include <vector>

#include "bench_engine_config.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "izwi/engine.h"
#include "synthetic_speech.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

izwi::AudioChatRequest turn(const std::vector<float>& audio, izwi::AudioChatMode mode, int32_t items) {
  izwi::AudioChatRequest r;
  r.pre_ids = {1, 6, 11, 10};  // start of text, <|im_start|>, a role id, newline: stand-ins
  r.post_ids = {7, 10, 6, 12, 10};
  r.audio = audio;
  r.sample_rate = 16000;
  r.mode = mode;
  r.max_items = items;
  return r;
}

struct Level {
  int32_t concurrency = 0;
  double frames_per_s = 0, rtf_p50 = 0, rtf_max = 0, ttfa_p50_ms = 0, ttfa_max_ms = 0, wall_s = 0;
  int64_t frames = 0;
};

Level run_chat(izwi::Engine& engine, const std::vector<float>& audio, int32_t concurrency, int32_t items) {
  const bool has_codec = engine.model_info().output_sample_rate > 0;
  Level level;
  level.concurrency = concurrency;
  std::vector<std::future<std::pair<double, double>>> streams;  // (ttfa ms, rtf)
  std::vector<int64_t> frames(static_cast<size_t>(concurrency));
  const Clock::time_point start = Clock::now();
  for (int32_t i = 0; i < concurrency; ++i) {
    streams.push_back(std::async(std::launch::async, [&, i] {
      const Clock::time_point submitted = Clock::now();
      izwi::StreamHandle stream = engine.audio_chat_streaming(turn(audio, izwi::AudioChatMode::Interleaved, items));
      double ttfa = -1;
      int64_t n = 0;
      while (std::optional<izwi::StreamChunk> chunk = stream.next()) {
        n += static_cast<int64_t>(chunk->audio_codes.size());
        const bool audio_out = has_codec ? !chunk->audio.empty() : !chunk->audio_codes.empty();
        if (ttfa < 0 && audio_out) ttfa = 1000 * seconds_between(submitted, Clock::now());
      }
      frames[static_cast<size_t>(i)] = n;
      const double wall = seconds_between(submitted, Clock::now());
      return std::make_pair(ttfa, n > 0 ? wall / (0.08 * static_cast<double>(n)) : 0.0);
    }));
  }
  std::vector<double> ttfa, rtf;
  for (auto& s : streams) {
    const auto [t, r] = s.get();
    ttfa.push_back(t);
    rtf.push_back(r);
  }
  level.wall_s = seconds_between(start, Clock::now());
  for (const int64_t n : frames) level.frames += n;
  level.frames_per_s = static_cast<double>(level.frames) / level.wall_s;
  level.rtf_p50 = izwi::cli::percentile(rtf, 0.5);
  level.rtf_max = *std::max_element(rtf.begin(), rtf.end());
  level.ttfa_p50_ms = izwi::cli::percentile(ttfa, 0.5);
  level.ttfa_max_ms = *std::max_element(ttfa.begin(), ttfa.end());
  return level;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark izwi audio chat (LFM2-Audio): ASR real-time factor, chat frames/s and TTFA"};
  std::string concurrency_list = "1,8";
  double audio_seconds = 4;
  int32_t items = 36;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "LFM2-Audio model folder"});
  app.add_option("--concurrency", concurrency_list, "Concurrent chat streams per run")->capture_default_str();
  app.add_option("--audio-seconds", audio_seconds, "Length of the user's recording")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 120.0));
  app.add_option("--items", items, "Items per chat answer (text tokens + frames)")
      ->capture_default_str()
      ->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);
  const std::string& model_dir = shared.model;
  const bool json = shared.json;  // ends the report with one JSON line

  return izwi::cli::run_main("izwi-audio-chat-bench", [&] {
    const std::vector<int32_t> levels = izwi::cli::parse_id_list(concurrency_list, "--concurrency");
    const int32_t max_concurrency = *std::max_element(levels.begin(), levels.end());
    const int32_t positions = 16 + static_cast<int32_t>(audio_seconds * 12.5) + 1 + items;
    izwi::EngineConfig config =
        izwi::bench::bench_engine_config(max_concurrency, positions, shared.threads.value_or(0), "auto");
    izwi::cli::apply_shared_engine_options(shared, config);  // --device, --dtype, --weight-dtype, -v / -q
    izwi::Engine engine(model_dir, config);
    if (!engine.model_info().audio_chat) throw std::invalid_argument(model_dir + " is not an audio chat model");
    const std::vector<float> audio = izwi::bench::synthetic_speech(audio_seconds, 16000);
    engine.audio_chat(turn(audio, izwi::AudioChatMode::Interleaved, 4));  // warm-up

    const Clock::time_point asr_start = Clock::now();
    const izwi::Output asr = engine.audio_chat(turn(audio, izwi::AudioChatMode::Sequential, 16));
    const double asr_rtf = seconds_between(asr_start, Clock::now()) / audio_seconds;
    std::vector<Level> results;
    for (const int32_t c : levels) results.push_back(run_chat(engine, audio, c, items));

    const bool has_codec = engine.model_info().output_sample_rate > 0;
    const int64_t resident_weight_bytes = engine.model_info().weight_bytes;  // encoder, depthformer, codec too
    fmt::print("model {}  threads {}  {:.1f} MB of weights held  recording {:.1f} s  {} items per answer  codec {}\n\n",
               model_dir, at::get_num_threads(), resident_weight_bytes / 1e6, audio_seconds, items,
               has_codec ? "yes" : "no (TTFA = first frame)");
    fmt::print("ASR (sequential, {} items): real-time factor {:.3f}\n\n", asr.tokens.size(), asr_rtf);
    fmt::print("{:>11} {:>8} {:>10} {:>9} {:>9} {:>13} {:>13}\n", "concurrency", "frames", "frames/s", "RTF p50",
               "RTF max", "TTFA p50 ms", "TTFA max ms");
    nlohmann::json report = {{"asr_rtf", asr_rtf}, {"audio_seconds", audio_seconds},
                             {"items", items},     {"threads", at::get_num_threads()},
                             {"codec", has_codec}, {"resident_weight_bytes", resident_weight_bytes}};
    for (const Level& l : results) {
      fmt::print("{:>11} {:>8} {:>10.2f} {:>9.3f} {:>9.3f} {:>13.1f} {:>13.1f}\n", l.concurrency, l.frames,
                 l.frames_per_s, l.rtf_p50, l.rtf_max, l.ttfa_p50_ms, l.ttfa_max_ms);
      report["chat"].push_back({{"concurrency", l.concurrency},
                                {"frames", l.frames},
                                {"frames_per_s", l.frames_per_s},
                                {"rtf_p50", l.rtf_p50},
                                {"rtf_max", l.rtf_max},
                                {"ttfa_p50_ms", l.ttfa_p50_ms},
                                {"ttfa_max_ms", l.ttfa_max_ms},
                                {"wall_s", l.wall_s}});
    }
    if (json) std::cout << report.dump() << "\n";
    return 0;
  });
}
