// izwi-voice-bench: what a cloned voice costs cold and warm. For each kind of voice (x-vector,
// and in-context when the model's speech tokenizer has its encoder) one fresh engine makes the
// voice from a synthetic reference recording, then serves requests in it one after another, each
// with new random text: the first is cold (nothing cached), the later ones find the voice's
// prompt prefix in the radix tree and, in-context, the codec state after the reference frames.
// Time to first audio (TTFA: submission to the first PCM chunk, first_chunk_frames = 1) of the
// warm requests is reported against the cold one, measured in the same run.
//
//   izwi-voice-bench --model DIR [--reference-seconds 5] [--transcript-len 16] [--text-len 24]
//                    [--requests 4] [--frames 6] [--threads N] [--json]

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench_engine_config.h"
#include "common/cli_main.h"
#include "common/engine_options.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "izwi/engine.h"
#include "synthetic_speech.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Options {
  double reference_seconds = 5;
  int32_t transcript_len = 16, text_len = 24, requests = 4, frames = 6;
};

struct VoiceResult {
  std::string kind;
  int64_t reference_frames = 0;
  double create_voice_ms = 0, cold_ttfa_ms = 0, warm_ttfa_p50_ms = 0;
  std::vector<double> warm_ttfa_ms;
  std::vector<uint64_t> cached_positions;  ///< Prefix-cache hit positions of each request.
  int64_t resident_weight_bytes = 0;       ///< ModelInfo::weight_bytes (speaker and codec encoders included).
};

std::vector<int32_t> random_ids(std::mt19937& rng, int32_t count, int32_t vocab) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < count; ++i) ids.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab)));
  return ids;
}

/// Returns false when the model cannot make this kind of voice (no codec encoder).
bool run_voice(const izwi::cli::SharedOptions& shared, bool in_context, const Options& o, VoiceResult& result) {
  const std::string& model_dir = shared.model;
  izwi::EngineConfig config = izwi::bench::bench_engine_config(
      1, 8 + o.transcript_len + o.text_len + o.frames + static_cast<int32_t>(o.reference_seconds * 13) + 16,
      shared.threads.value_or(0), "auto");
  izwi::cli::apply_shared_engine_options(shared, config);  // -v / -q's log level
  config.enable_prefix_cache = true;
  config.num_kv_blocks *= o.requests + 1;  // room for the cached prefixes beside the running request
  izwi::Engine engine(model_dir, config);
  if (!engine.model_info().clones_voices)
    throw std::invalid_argument(model_dir + " does not clone voices (not a Base model)");
  result.resident_weight_bytes = engine.model_info().weight_bytes;
  std::mt19937 rng(1234);
  const int32_t vocab = 1000;  // small ids are in every text vocabulary
  const std::vector<float> reference = izwi::bench::synthetic_speech(o.reference_seconds, 24000);
  izwi::VoiceTranscript transcript;
  if (in_context) transcript.text_ids = random_ids(rng, o.transcript_len + 5, vocab);
  const Clock::time_point made = Clock::now();
  izwi::Voice voice;
  try {
    voice = engine.create_voice(reference, 24000, transcript);
  } catch (const izwi::Error& e) {
    if (in_context && e.code() == izwi::ErrorCode::Unsupported) return false;
    throw;
  }
  result.create_voice_ms = ms_since(made);
  result.kind = in_context ? "in-context" : "x-vector";
  result.reference_frames = static_cast<int64_t>(voice.reference_codes.size());
  for (int32_t i = 0; i < o.requests; ++i) {
    izwi::SpeechRequest r;
    // The chat framing's ids (3 before the text, 5 after) are the same in every request, as
    // tokenized text would be; the text between them is new.
    r.text_ids = {11, 12, 13};
    for (const int32_t id : random_ids(rng, o.text_len, vocab)) r.text_ids.push_back(id);
    r.text_ids.insert(r.text_ids.end(), {14, 15, 11, 12, 13});
    r.voice = voice;
    r.params.min_frames = r.params.max_frames = o.frames;
    r.params.seed = 100 + static_cast<uint64_t>(i);
    r.first_chunk_frames = 1;
    const uint64_t hits_before = engine.metrics().prefix_cache_hit_tokens;
    const Clock::time_point submitted = Clock::now();
    izwi::StreamHandle stream = engine.synthesize_streaming(r);
    double ttfa = -1;
    while (std::optional<izwi::StreamChunk> chunk = stream.next()) {
      if (ttfa < 0 && !chunk->audio.empty()) ttfa = ms_since(submitted);
    }
    result.cached_positions.push_back(engine.metrics().prefix_cache_hit_tokens - hits_before);
    if (i == 0) {
      result.cold_ttfa_ms = ttfa;
    } else {
      result.warm_ttfa_ms.push_back(ttfa);
    }
  }
  result.warm_ttfa_p50_ms = izwi::cli::percentile(result.warm_ttfa_ms, 0.5);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark cold and warm requests in a cloned voice"};
  Options o;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "Qwen3-TTS Base model folder"});
  app.add_option("--reference-seconds", o.reference_seconds, "Length of the reference recording")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 60.0));
  app.add_option("--transcript-len", o.transcript_len, "Transcript ids of an in-context voice")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--text-len", o.text_len, "Random text ids per request")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--requests", o.requests, "Requests per voice (the first is cold)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  app.add_option("--frames", o.frames, "Frames per request")->capture_default_str()->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);
  const std::string& model_dir = shared.model;
  const bool json = shared.json;  // ends the report with one JSON line

  return izwi::cli::run_main("izwi-voice-bench", [&] {
    std::vector<VoiceResult> results;
    for (const bool in_context : {false, true}) {
      VoiceResult r;
      if (run_voice(shared, in_context, o, r)) results.push_back(r);
    }
    const int64_t resident_weight_bytes = results.empty() ? 0 : results[0].resident_weight_bytes;
    fmt::print(
        "model {}  threads {}  {:.1f} MB of weights held  reference {:.1f} s  {} requests per voice, {} frames "
        "each\n\n",
        model_dir, at::get_num_threads(), resident_weight_bytes / 1e6, o.reference_seconds, o.requests, o.frames);
    fmt::print("{:>11} {:>10} {:>15} {:>13} {:>14} {:>10} {:>14} {:>13}\n", "voice", "ref frames", "create_voice ms",
               "cold TTFA ms", "warm TTFA p50", "warm/cold", "cached (cold)", "cached (warm)");
    nlohmann::json report;
    for (const VoiceResult& r : results) {
      const double ratio = r.warm_ttfa_p50_ms / r.cold_ttfa_ms;
      fmt::print("{:>11} {:>10} {:>15.1f} {:>13.1f} {:>14.1f} {:>10.2f} {:>14} {:>13}\n", r.kind, r.reference_frames,
                 r.create_voice_ms, r.cold_ttfa_ms, r.warm_ttfa_p50_ms, ratio, r.cached_positions[0],
                 r.cached_positions[1]);
      report["voices"].push_back({{"voice", r.kind},
                                  {"reference_frames", r.reference_frames},
                                  {"create_voice_ms", r.create_voice_ms},
                                  {"cold_ttfa_ms", r.cold_ttfa_ms},
                                  {"warm_ttfa_ms", r.warm_ttfa_ms},
                                  {"warm_ttfa_p50_ms", r.warm_ttfa_p50_ms},
                                  {"warm_over_cold", ratio},
                                  {"cached_positions", r.cached_positions}});
    }
    report["threads"] = at::get_num_threads();
    report["reference_seconds"] = o.reference_seconds;
    report["requests"] = o.requests;
    report["frames"] = o.frames;
    report["resident_weight_bytes"] = resident_weight_bytes;
    if (json) std::cout << report.dump() << "\n";
    return 0;
  });
}
