// izwi-tts-bench: speech synthesis throughput, real-time factor, time to first audio and the
// memory-bandwidth roofline of a Qwen3-TTS model, measured in one run.
//
//   izwi-tts-bench --model DIR [--concurrency 1,4,16] [--frames 48] [--chunk-frames 4]
//                  [--weight-dtype auto|bfloat16] [--threads N] [--no-codec-split]
//                  [--no-retain-freed-memory] [--json]
//
// Every request streams a fixed number of frames (min_frames = max_frames = --frames), sampled
// with a per-request seed. A frame costs one talker step plus the code predictor's 15 sub-steps,
// each reading all of its weights, so at concurrency 1 frames/s is bounded by bandwidth /
// ModelInfo::decode_weight_bytes. The read bandwidth is measured right before and right after
// the concurrency-1 run, as izwi-bench does. The codec's share is measured afterwards by decoding
// the concurrency-1 run's codes again through a codec of its own, in chunks of --chunk-frames.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "bench_engine_config.h"
#include "bench_support/memory_bandwidth.h"
#include "codec/codec_decoder.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/op_profile.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "izwi/engine.h"
#include "kernels/backend.h"
#include "roofline_probes.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// The talker's text vocabulary (config.json talker_config.text_vocab_size), for random text ids.
int32_t text_vocab_size(const std::string& model_dir) {
  std::ifstream in(std::filesystem::path(model_dir) / "config.json");
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, false);
  if (config.is_discarded() || !config.contains("talker_config")) return 0;
  return config["talker_config"].value("text_vocab_size", 0);
}

struct LevelResult {
  int32_t concurrency = 0;
  double frames_per_s = 0;                  ///< All streams together, while every one of them generates.
  double wall_frames_per_s = 0;             ///< All frames / wall time of the level (prefill included).
  double rtf_p50 = 0, rtf_max = 0;          ///< Per stream: (finish - submission) / audio duration.
  double rtf_aggregate = 0;                 ///< Wall time of the level / audio of all streams.
  double ttfa_p50_ms = 0, ttfa_p99_ms = 0;  ///< Submission to the first audio sample.
  double wall_s = 0;
  int64_t samples_per_stream = 0;
  std::vector<std::vector<int32_t>> first_stream_codes;  ///< [frame][codebook] of stream 0.
  /// Milliseconds per step of each timed part (common/op_profile.h), over the steps of exactly
  /// `concurrency` tokens: a frame of every stream.
  std::map<izwi::ProfiledOp, double> step_ms;
};

struct Options {
  int32_t frames = 48, chunk_frames = 4, text_len = 24;
};

LevelResult run_level(izwi::Engine& engine, int32_t concurrency, const Options& o, int32_t text_vocab,
                      std::mt19937& rng) {
  struct Trace {
    Clock::time_point submitted, first_audio;
    std::vector<Clock::time_point> frame_times;
    std::vector<std::vector<int32_t>> codes;
    int64_t samples = 0;
    bool got_audio = false;
    izwi::StreamChunk last;
  };
  const izwi::ModelInfo& info = engine.model_info();
  std::vector<Trace> traces(static_cast<size_t>(concurrency));
  std::vector<izwi::StreamHandle> handles;
  izwi::take_op_profile();
  const auto start = Clock::now();
  for (int32_t i = 0; i < concurrency; ++i) {
    izwi::SpeechRequest r;
    // Distinct random text between the released chat framing's positions (3 ids before, 5 after).
    const int32_t vocab = std::max(text_vocab, 16);
    for (int32_t k = 0; k < o.text_len + 8; ++k) r.text_ids.push_back(static_cast<int32_t>(rng() % vocab));
    if (!info.speakers.empty()) r.speaker = info.speakers[0];
    r.params.min_frames = o.frames;
    r.params.max_frames = o.frames;
    r.params.seed = 1000 + static_cast<uint64_t>(i);
    r.chunk_frames = o.chunk_frames;
    traces[static_cast<size_t>(i)].submitted = Clock::now();
    handles.push_back(engine.synthesize_streaming(r));
  }
  // One reader per stream: a slow reader must not delay another stream's timestamps.
  std::vector<std::future<void>> readers;
  for (int32_t i = 0; i < concurrency; ++i) {
    readers.push_back(std::async(std::launch::async, [&, i] {
      Trace& t = traces[static_cast<size_t>(i)];
      while (std::optional<izwi::StreamChunk> chunk = handles[static_cast<size_t>(i)].next()) {
        const auto now = Clock::now();
        for (auto& frame : chunk->audio_codes) {
          t.frame_times.push_back(now);
          t.codes.push_back(std::move(frame));
        }
        if (!chunk->audio.empty() && !t.got_audio) t.first_audio = now, t.got_audio = true;
        t.samples += static_cast<int64_t>(chunk->audio.size());
        if (chunk->finished) t.last = std::move(*chunk);
      }
    }));
  }
  for (auto& r : readers) r.get();
  const auto end = Clock::now();

  LevelResult result;
  result.concurrency = concurrency;
  result.step_ms = izwi::ms_per_step(izwi::profile_of_steps(izwi::take_op_profile(), concurrency));
  result.wall_s = std::chrono::duration<double>(end - start).count();
  std::vector<double> ttfa, rtf;
  Clock::time_point window_begin = start, window_end = Clock::time_point::max();
  int64_t all_frames = 0, all_samples = 0;
  for (const Trace& t : traces) {
    if (t.last.finish_reason == izwi::FinishReason::Error)
      throw std::runtime_error("a request failed: " + t.last.error);
    if (t.frame_times.empty() || !t.got_audio) throw std::runtime_error("a request produced no audio");
    ttfa.push_back(ms_between(t.submitted, t.first_audio));
    const double audio_s = static_cast<double>(t.samples) / info.output_sample_rate;
    rtf.push_back(t.last.timings.total_ms / 1000.0 / audio_s);
    window_begin = std::max(window_begin, t.frame_times.front());
    window_end = std::min(window_end, t.frame_times.back());
    all_frames += static_cast<int64_t>(t.frame_times.size());
    all_samples += t.samples;
  }
  int64_t in_window = 0;
  for (const Trace& t : traces) {
    for (const auto& time : t.frame_times) in_window += (time > window_begin && time <= window_end) ? 1 : 0;
  }
  const double window_s = std::chrono::duration<double>(window_end - window_begin).count();
  if (window_s <= 0 || in_window == 0) {
    throw std::runtime_error("--frames is too short to measure generation at this --chunk-frames; raise it");
  }
  result.frames_per_s = static_cast<double>(in_window) / window_s;
  result.wall_frames_per_s = static_cast<double>(all_frames) / result.wall_s;
  result.rtf_p50 = izwi::cli::percentile(rtf, 0.50);
  result.rtf_max = *std::max_element(rtf.begin(), rtf.end());
  result.rtf_aggregate = result.wall_s / (static_cast<double>(all_samples) / info.output_sample_rate);
  result.ttfa_p50_ms = izwi::cli::percentile(ttfa, 0.50);
  result.ttfa_p99_ms = izwi::cli::percentile(ttfa, 0.99);
  result.samples_per_stream = traces[0].samples;
  result.first_stream_codes = std::move(traces[0].codes);
  return result;
}

struct CodecCost {
  double ms_per_frame = 0;
  double linear_gflop_per_frame = 0;  ///< in the CPU linear kernels (its convolutions run there as products)
  double linear_ms_per_frame = 0;
};

/// What the codec costs per frame to decode `codes` ([frame][codebook]) in chunks of
/// `chunk_frames`, as the engine streams them (a second decoder on the engine's backend, on a
/// short-lived thread).
CodecCost codec_cost(const std::string& model_dir, const izwi::EngineConfig& config,
                     const std::vector<std::vector<int32_t>>& codes, int32_t chunk_frames) {
  CodecCost cost;
  std::thread([&] {
    at::set_num_threads(at::get_num_threads());
    const izwi::Backend backend(izwi::BackendOptions::from_config(config));
    const std::unique_ptr<izwi::CodecDecoder> codec = izwi::load_codec_decoder(model_dir, backend);
    const int64_t frames = static_cast<int64_t>(codes.size()), groups = static_cast<int64_t>(codes[0].size());
    at::Tensor all = at::empty({groups, frames}, at::kLong);
    auto a = all.accessor<int64_t, 2>();
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < groups; ++k) a[k][f] = codes[static_cast<size_t>(f)][static_cast<size_t>(k)];
    }
    const auto decode_all = [&] {
      const std::unique_ptr<izwi::CodecDecoderState> state = codec->new_state();
      for (int64_t f = 0; f < frames; f += chunk_frames) {
        codec->decode_streaming({state.get()}, {all.narrow(1, f, std::min<int64_t>(chunk_frames, frames - f))});
      }
    };
    decode_all();  // warm-up
    izwi::set_op_profiling(true);
    izwi::take_op_profile();
    const auto start = Clock::now();
    decode_all();
    cost.ms_per_frame = ms_between(start, Clock::now()) / static_cast<double>(frames);
    izwi::set_op_profiling(false);
    for (const auto& [key, entry] : izwi::take_op_profile()) {
      if (key.first != izwi::ProfiledOp::Linear) continue;
      cost.linear_gflop_per_frame += entry.flop / 1e9 / static_cast<double>(frames);
      cost.linear_ms_per_frame += entry.seconds * 1e3 / static_cast<double>(frames);
    }
  }).join();
  return cost;
}

// GFLOP of one frame in the talker and the code predictor (izwi::bench::gflop_per_output): texts of
// 2 and 3 ids given whole in the prompt, one frame generated. The step that makes the frame also
// decodes it (the request ends there), so the codec's products for that one frame from a fresh
// state, counted alone, are taken out. Leaves op profiling off.
double linear_gflop_per_frame(izwi::Engine& engine, const std::string& model_dir, const izwi::EngineConfig& config,
                              int32_t text_vocab, std::mt19937& rng) {
  const izwi::ModelInfo& info = engine.model_info();
  izwi::bench::PromptStep steps[2];
  std::vector<std::vector<int32_t>> frame;
  izwi::set_op_profiling(true);
  for (int32_t n : {2, 3}) {
    izwi::SpeechRequest r;
    // The released chat framing's positions (3 ids before, 5 after) around n random ids.
    for (int32_t k = 0; k < n + 8; ++k) r.text_ids.push_back(static_cast<int32_t>(rng() % std::max(text_vocab, 16)));
    r.text_mode = izwi::SpeechTextMode::Full;
    if (!info.speakers.empty()) r.speaker = info.speakers[0];
    r.params.min_frames = 1;
    r.params.max_frames = 1;
    izwi::take_op_profile();
    const izwi::Output out = engine.synthesize(r);
    steps[n - 2] = izwi::bench::prompt_step(izwi::take_op_profile());
    frame = out.audio_codes;
  }
  const std::optional<double> with_codec = izwi::bench::gflop_per_output(steps[0], steps[1]);
  const double codec = frame.size() == 1 ? codec_cost(model_dir, config, frame, 1).linear_gflop_per_frame : 0;
  izwi::set_op_profiling(false);
  if (!with_codec || frame.size() != 1 || *with_codec <= codec) {
    throw std::runtime_error(
        "the FLOPs of a frame could not be counted from the linear products (a one-frame request did not run in "
        "one profiled step)");
  }
  return *with_codec - codec;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark izwi speech synthesis against the memory-bandwidth roofline"};
  std::string concurrency_list = "1,4,16";
  Options o;
  bool no_codec_split = false, no_retain = false;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "Qwen3-TTS model folder"});
  app.add_option("--concurrency", concurrency_list, "Concurrent streams per run")->capture_default_str();
  app.add_option("--frames", o.frames, "Frames per stream (80 ms each)")->capture_default_str();
  app.add_option("--chunk-frames", o.chunk_frames, "Frames per streamed audio chunk")->capture_default_str();
  app.add_option("--text-len", o.text_len, "Random text ids per request")->capture_default_str();
  app.add_flag("--no-codec-split", no_codec_split, "Skip the separate codec decode timing");
  app.add_flag("--no-retain-freed-memory", no_retain, "EngineConfig::retain_freed_memory = false");
  CLI11_PARSE(app, argc, argv);
  const std::string& model_dir = shared.model;
  const int32_t threads = shared.threads.value_or(0);
  const std::string weight_dtype = shared.weight_dtype.empty() ? "auto" : shared.weight_dtype;
  const bool json = shared.json;  // ends the report with one JSON line

  return izwi::cli::run_main("izwi-tts-bench", [&] {
    const std::vector<int32_t> levels = izwi::cli::parse_id_list(concurrency_list, "--concurrency");
    if (o.frames < 2) throw std::invalid_argument("--frames must be >= 2");
    if (o.chunk_frames < 1) throw std::invalid_argument("--chunk-frames must be >= 1");
    if (o.text_len < 1) throw std::invalid_argument("--text-len must be >= 1");
    const int32_t max_concurrency = *std::max_element(levels.begin(), levels.end());
    // Only the KV the streams need: a 0.6B talker keeps 0.23 MB of float32 K/V per position.
    izwi::EngineConfig config =
        izwi::bench::bench_engine_config(max_concurrency, o.text_len + 32 + o.frames, threads, weight_dtype);
    config.retain_freed_memory = !no_retain;
    izwi::cli::apply_shared_engine_options(shared, config);  // -v / -q's log level

    std::mt19937 rng(1234);
    std::vector<LevelResult> results;
    std::vector<double> bandwidth_samples;
    const double fma_peak = izwi::bench::probe_fma_peak_gflops(threads);
    int64_t weight_bytes = 0, resident_weight_bytes = 0;
    double gflop_per_frame = 0;
    int32_t sample_rate = 0;
    const int32_t text_vocab = text_vocab_size(model_dir);
    if (!izwi::Backend(izwi::BackendOptions::from_config(config)).device().is_cpu()) {
      // On a GPU the code predictor's chain replays a CUDA graph, whose products are not profiled:
      // a frame's FLOPs come from an engine without graphs, loaded alone before the measured one.
      izwi::EngineConfig eager = config;
      eager.use_cuda_graphs = false;
      izwi::Engine engine(model_dir, eager);
      gflop_per_frame = linear_gflop_per_frame(engine, model_dir, config, text_vocab, rng);
    }
    {
      izwi::Engine engine(model_dir, config);  // sets the thread count before measuring bandwidth
      const izwi::ModelInfo& info = engine.model_info();
      if (!info.produces_audio) throw std::invalid_argument(model_dir + " is not a speech synthesis model");
      weight_bytes = info.decode_weight_bytes;
      resident_weight_bytes = info.weight_bytes;
      sample_rate = info.output_sample_rate;
      Options warm = o;
      warm.frames = std::min(o.frames, 2 * o.chunk_frames + 2);
      run_level(engine, 1, warm, text_vocab, rng);  // warm-up
      if (gflop_per_frame == 0) gflop_per_frame = linear_gflop_per_frame(engine, model_dir, config, text_vocab, rng);
      izwi::set_op_profiling(true);
      for (int32_t c : levels) {
        const bool bracket = c == 1 || bandwidth_samples.empty();
        if (bracket) bandwidth_samples.push_back(izwi::bench::probe_bandwidth_gbps());
        results.push_back(run_level(engine, c, o, text_vocab, rng));
        if (bracket) bandwidth_samples.push_back(izwi::bench::probe_bandwidth_gbps());
      }
      izwi::set_op_profiling(false);
    }
    const double bandwidth = (bandwidth_samples[0] + bandwidth_samples[1]) / 2;
    const double roofline_fps = bandwidth * 1e9 / static_cast<double>(weight_bytes);
    const auto single =
        std::find_if(results.begin(), results.end(), [](const LevelResult& r) { return r.concurrency == 1; });

    nlohmann::json report;
    fmt::print(
        "model {}  threads {}  weight dtype {} ({:.1f} MB of weights held)  {} frames per stream ({:.2f} s of "
        "audio), chunks of {}\n",
        model_dir, at::get_num_threads(), weight_dtype, resident_weight_bytes / 1e6, o.frames,
        static_cast<double>(results[0].samples_per_stream) / sample_rate, o.chunk_frames);
    fmt::print(
        "read bandwidth {:.1f} GB/s (before {:.1f}, after {:.1f}), {:.1f} MB of weights per frame -> "
        "roofline {:.2f} frames/s at concurrency 1\n",
        bandwidth, bandwidth_samples[0], bandwidth_samples[1], weight_bytes / 1e6, roofline_fps);
    fmt::print(
        "FMA peak {:.0f} GFLOP/s, {:.2f} GFLOP per frame in the talker and code predictor -> compute "
        "roofline {:.1f} frames/s at any concurrency (the codec's FLOPs come on top)\n\n",
        fma_peak, gflop_per_frame, fma_peak / gflop_per_frame);
    fmt::print("{:>11} {:>10} {:>11} {:>9} {:>9} {:>9} {:>13} {:>13}\n", "concurrency", "frames/s", "wall fr/s",
               "RTF p50", "RTF max", "RTF agg", "TTFA p50 ms", "TTFA p99 ms");
    for (const LevelResult& r : results) {
      fmt::print("{:>11} {:>10.2f} {:>11.2f} {:>9.3f} {:>9.3f} {:>9.3f} {:>13.1f} {:>13.1f}\n", r.concurrency,
                 r.frames_per_s, r.wall_frames_per_s, r.rtf_p50, r.rtf_max, r.rtf_aggregate, r.ttfa_p50_ms,
                 r.ttfa_p99_ms);
      nlohmann::json level = {{"concurrency", r.concurrency},
                              {"frames_per_s", r.frames_per_s},
                              {"frames_per_s_per_stream", r.frames_per_s / r.concurrency},
                              {"wall_frames_per_s", r.wall_frames_per_s},
                              {"rtf_p50", r.rtf_p50},
                              {"rtf_max", r.rtf_max},
                              {"rtf_aggregate", r.rtf_aggregate},
                              {"ttfa_p50_ms", r.ttfa_p50_ms},
                              {"ttfa_p99_ms", r.ttfa_p99_ms},
                              {"wall_s", r.wall_s},
                              {"model_gflop_per_s", r.frames_per_s * gflop_per_frame},
                              {"compute_fraction", r.frames_per_s * gflop_per_frame / fma_peak}};
      if (single != results.end()) level["speedup_vs_1"] = r.frames_per_s / single->frames_per_s;
      for (const auto& [op, ms] : r.step_ms) level["step_ms"][izwi::profiled_op_name(op)] = ms;
      report["results"].push_back(level);
    }
    // A step here is a frame of every stream: the talker's pass, then (sample) its codec head, the
    // code predictor's 15 sub-steps and their heads, then the codec on the streams with a whole chunk.
    fmt::print("\nstep of a frame per stream, ms per step (linear: the products inside all of them)\n");
    fmt::print("{:>11} {:>9} {:>9} {:>9} {:>13} {:>9} {:>9}\n", "concurrency", "step", "talker", "sample",
               "audio decode", "engine", "linear");
    for (const LevelResult& r : results) {
      const auto ms = [&](izwi::ProfiledOp op) {
        const auto it = r.step_ms.find(op);
        return it == r.step_ms.end() ? 0.0 : it->second;
      };
      using Op = izwi::ProfiledOp;
      fmt::print("{:>11} {:>9.1f} {:>9.1f} {:>9.1f} {:>13.1f} {:>9.1f} {:>9.1f}\n", r.concurrency, ms(Op::Step),
                 ms(Op::Forward), ms(Op::Sample), ms(Op::AudioDecode),
                 ms(Op::Step) - ms(Op::Forward) - ms(Op::Sample) - ms(Op::AudioDecode), ms(Op::Linear));
    }
    report["frames"] = o.frames;
    report["chunk_frames"] = o.chunk_frames;
    report["samples_per_frame"] = results[0].samples_per_stream / o.frames;
    report["sample_rate"] = sample_rate;
    report["threads"] = at::get_num_threads();
    report["bandwidth_gbps"] = bandwidth;
    report["bandwidth_samples_gbps"] = bandwidth_samples;
    report["weight_bytes_per_frame"] = weight_bytes;
    report["resident_weight_bytes"] = resident_weight_bytes;  // ModelInfo::weight_bytes: codec included
    report["roofline_frames_per_s"] = roofline_fps;
    report["fma_peak_gflops"] = fma_peak;
    report["gflop_per_frame"] = gflop_per_frame;
    if (single != results.end()) {
      report["roofline_fraction"] = single->frames_per_s / roofline_fps;
      fmt::print("\nroofline fraction at concurrency 1: {:.2f}\n", single->frames_per_s / roofline_fps);
      for (const LevelResult& r : results) {
        if (r.concurrency != 1) {
          fmt::print(
              "concurrency {:>3}: {:.2f}x the frames/s of concurrency 1; talker + code predictor FLOPs at {:.1f} "
              "GFLOP/s, {:.2f} of the FMA peak\n",
              r.concurrency, r.frames_per_s / single->frames_per_s, r.frames_per_s * gflop_per_frame,
              r.frames_per_s * gflop_per_frame / fma_peak);
        }
      }
      if (!no_codec_split) {
        const CodecCost codec = codec_cost(model_dir, config, single->first_stream_codes, o.chunk_frames);
        const double frame_ms = 1000.0 / single->frames_per_s;
        report["codec_ms_per_frame"] = codec.ms_per_frame;
        report["frame_ms"] = frame_ms;
        report["codec_share"] = codec.ms_per_frame / frame_ms;
        report["codec_linear_gflop_per_frame"] = codec.linear_gflop_per_frame;
        report["codec_linear_compute_fraction"] =
            codec.linear_ms_per_frame > 0 ? codec.linear_gflop_per_frame / codec.linear_ms_per_frame * 1e3 / fma_peak
                                          : 0.0;
        fmt::print(
            "codec decode alone (chunks of {}): {:.2f} ms per frame, {:.0f}% of the {:.2f} ms per frame at "
            "concurrency 1\n",
            o.chunk_frames, codec.ms_per_frame, 100 * codec.ms_per_frame / frame_ms, frame_ms);
        // Every frame of every stream costs the language model's FLOPs and the codec's, whatever the
        // batching: their sum at the FMA peak bounds frames/s at any concurrency.
        const double ceiling_fps = fma_peak / (gflop_per_frame + codec.linear_gflop_per_frame);
        report["compute_ceiling_frames_per_s"] = ceiling_fps;
        report["compute_ceiling_vs_1"] = ceiling_fps / single->frames_per_s;
        fmt::print(
            "codec: {:.2f} GFLOP per frame in its products ({:.1f} ms, {:.2f} of the FMA peak); with the talker and "
            "code predictor, {:.2f} GFLOP per frame -> at most {:.1f} frames/s at the FMA peak, {:.1f}x concurrency "
            "1\n",
            codec.linear_gflop_per_frame, codec.linear_ms_per_frame,
            codec.linear_ms_per_frame > 0 ? codec.linear_gflop_per_frame / codec.linear_ms_per_frame * 1e3 / fma_peak
                                          : 0.0,
            gflop_per_frame + codec.linear_gflop_per_frame, ceiling_fps, ceiling_fps / single->frames_per_s);
      }
    }
    if (json) std::cout << report.dump() << "\n";
    return 0;
  });
}
