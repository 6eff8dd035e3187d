// izwi-bench: decode throughput, TTFT and the memory-bandwidth and compute rooflines, measured in
// one run.
//
//   izwi-bench --model DIR [--concurrency 1,4,16,64] [--prompt-len 128] [--gen 128] [--prefill-len 512]
//              [--shared-prefix 512] [--kernels fast|torch|both] [--weight-dtype auto|bfloat16|int8|int4]
//              [--cpu-kernels auto|avx512_bf16|avx512|avx2|portable] [--kv-cache-dtype auto|float32|bfloat16]
//              [--no-retain-freed-memory] [--device cpu|cuda|mps] [--dtype float32|bfloat16|float16]
//              [--no-cuda-graphs] [--json]
//
// On a CPU a decode step reads every weight once, so at concurrency 1 tokens/s is bounded by
// bandwidth / weight bytes. The bench measures this machine's streaming read bandwidth right
// before and right after the concurrency-1 run (the VM's bandwidth drifts with its neighbours)
// and reports the fraction of the bound, at their mean, that the engine reaches. Batched decode
// and prefill are compute bound: the bench measures the FMA peak before the engine starts and
// reports the GFLOP/s the linear kernels reach per concurrency level and in a prefill, timed
// inside the kernels, as a fraction of that peak. The same profile (common/op_profile.h) splits a
// decode step into the linear layers, attention, the other ops, the rest of the model and the
// engine's own work. On a GPU the ops run asynchronously and a decode step replays a CUDA graph,
// so that split comes from a pass of its own: graphs off and a device wait around every op, which
// slows the steps (their speed is the measured runs') but times each op's execution.
//
// Two decode throughputs per level, from each token's delivery time:
// - tokens/s: over the window in which every request decodes (after the last request's first
//   token, before the first request's last). With more prompt tokens than one step's budget takes
//   while the first requests decode (e.g. 256 requests of 512 prompt tokens), the first requests
//   finish before the last one starts and that window does not exist: then null ("-").
// - decode tokens/s: the tokens delivered after the last request's first token, over the time from
//   it to the run's last token. Every prompt is in the cache by then, so no step of that window
//   computes a prompt row; the number of requests still decoding falls as they finish, and
//   `decode requests` is its mean over the window. It exists for every run with --gen >= 2.
// The FLOPs of a token are counted from the engine's own linear products (two short prompts'
// profiles), not from the weight bytes, which depend on how the weights are stored.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "bench_engine_config.h"
#include "bench_support/memory_bandwidth.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/op_profile.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "common/shell_quote.h"
#include "executor/device_profile_fence.h"
#include "executor/torch_executor.h"
#include "io/weight_loader.h"
#include "izwi/engine.h"
#include "roofline_probes.h"

namespace {

/// The process's peak resident memory so far, in bytes (Linux's ru_maxrss is in KiB).
int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return int64_t{usage.ru_maxrss} * 1024;
}

using Clock = std::chrono::steady_clock;

std::vector<int32_t> random_prompt(std::mt19937& rng, int32_t length, int32_t vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(length));
  for (int32_t& id : ids) id = 3 + static_cast<int32_t>(rng() % static_cast<uint32_t>(vocab - 3));
  return ids;
}

struct RunResult {
  int32_t concurrency = 0;
  /// All requests together, while every one of them decodes; absent when no such window exists.
  std::optional<double> tokens_per_s;
  double tokens_per_s_per_request = 0;  ///< tokens_per_s / concurrency (0 without tokens_per_s).
  /// All requests together, after the last request's first token: no step of it computes a prompt.
  double decode_tokens_per_s = 0;
  double decode_requests_mean = 0;  ///< requests decoding in that window, on average over its time
  double wall_tokens_per_s = 0;     ///< All generated tokens / wall time (prefill included).
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  /// Each part's calls in the steps of exactly `concurrency` tokens (the steps in which every
  /// request decodes), by op.
  izwi::StepProfile decode;
};

// GFLOP/s of the kernel calls in `entry` (0 when there were none).
double achieved_gflops(const izwi::OpProfileEntry& entry) {
  return entry.seconds > 0 ? entry.flop / entry.seconds / 1e9 : 0;
}

izwi::OpProfileEntry part(const izwi::StepProfile& parts, izwi::ProfiledOp op) {
  const auto it = parts.find(op);
  return it == parts.end() ? izwi::OpProfileEntry{} : it->second;
}

// The parts of a step in milliseconds per step: the ops, the rest of the model's forward and
// sampling, and the engine's bookkeeping around them (scheduling and handing outputs over are
// outside the Step timer).
struct StepBreakdown {
  int64_t steps = 0;
  int64_t graph_replays = 0;  ///< of those steps, the ones replayed from a CUDA graph (ops untimed)
  double step = 0, linear = 0, attention = 0, other_ops = 0, rest_of_model = 0, engine = 0;
};

StepBreakdown step_breakdown(const izwi::StepProfile& parts) {
  using Op = izwi::ProfiledOp;
  const std::map<Op, double> per_step = izwi::ms_per_step(parts);
  const auto ms = [&](Op op) {
    const auto it = per_step.find(op);
    return it == per_step.end() ? 0.0 : it->second;
  };
  StepBreakdown b;
  b.steps = part(parts, Op::Step).calls;
  b.graph_replays = part(parts, Op::GraphReplay).calls;
  const double model = ms(Op::Forward) + ms(Op::Sample);
  b.step = ms(Op::Step);
  b.linear = ms(Op::Linear);
  b.attention = ms(Op::Attention);
  b.other_ops = ms(Op::Norm) + ms(Op::Rope) + ms(Op::AttentionInputs) + ms(Op::Activation) + ms(Op::ShortConv);
  b.rest_of_model = model - b.linear - b.attention - b.other_ops;
  b.engine = b.step - model;
  return b;
}

nlohmann::json breakdown_json(const StepBreakdown& b) {
  return {{"steps", b.steps},
          {"graph_replays", b.graph_replays},
          {"step_ms", b.step},
          {"linear_ms", b.linear},
          {"attention_ms", b.attention},
          {"other_ops_ms", b.other_ops},
          {"rest_of_model_ms", b.rest_of_model},
          {"engine_ms", b.engine}};
}

// Runs `concurrency` requests at once. Each token is timestamped as the worker delivers it, so
// decode throughput is measured over windows that hold no prefill (see the header comment).
RunResult run_concurrency(izwi::Engine& engine, int32_t concurrency, int32_t prompt_len, int32_t gen,
                          std::mt19937& rng) {
  if (gen < 2) throw std::invalid_argument("--gen must be at least 2 to measure decoding");
  struct Trace {
    std::vector<Clock::time_point> token_times;
    izwi::StreamChunk last;
    std::promise<void> done;
  };
  const int32_t vocab = engine.model_info().vocab_size;
  std::vector<std::unique_ptr<Trace>> traces;
  izwi::take_op_profile();
  const auto start = Clock::now();
  for (int32_t i = 0; i < concurrency; ++i) {
    izwi::Request r;
    r.prompt_ids = random_prompt(rng, prompt_len, vocab);
    r.params.max_tokens = gen;
    r.params.min_tokens = gen;
    r.params.sampling.temperature = 0.0f;  // greedy, whatever the folder's generation_config.json says
    traces.push_back(std::make_unique<Trace>());
    Trace* trace = traces.back().get();
    trace->token_times.reserve(static_cast<size_t>(gen));
    engine.generate_streaming(r, [trace](const izwi::StreamChunk& chunk) {
      const auto now = Clock::now();
      for (size_t k = 0; k < chunk.tokens.size(); ++k) trace->token_times.push_back(now);
      if (chunk.finished) {
        trace->last = chunk;
        trace->done.set_value();
      }
    });
  }
  for (auto& trace : traces) trace->done.get_future().wait();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();

  RunResult result;
  result.concurrency = concurrency;
  result.decode = izwi::profile_of_steps(izwi::take_op_profile(), concurrency);
  std::vector<double> ttfts;
  // last_first: the last request's first token; first_last: the first request's last token.
  Clock::time_point last_first = start, first_last = Clock::time_point::max(), run_end = start;
  for (const auto& trace : traces) {
    if (trace->last.finish_reason != izwi::FinishReason::Length)
      throw std::runtime_error("a request did not finish normally");
    ttfts.push_back(trace->last.timings.ttft_ms);
    last_first = std::max(last_first, trace->token_times.front());
    first_last = std::min(first_last, trace->token_times.back());
    run_end = std::max(run_end, trace->token_times.back());
  }
  const auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  int64_t all_decoding = 0, after_prefill = 0;
  double decoding_s = 0;  // the requests' decoding time after last_first, summed
  for (const auto& trace : traces) {
    for (const auto& t : trace->token_times) {
      all_decoding += (t > last_first && t <= first_last) ? 1 : 0;
      after_prefill += t > last_first ? 1 : 0;
    }
    decoding_s += std::max(0.0, seconds(last_first, trace->token_times.back()));
  }
  const double decode_s = seconds(last_first, run_end);
  if (decode_s <= 0 || after_prefill == 0) throw std::runtime_error("--gen is too short to measure decoding; raise it");
  result.decode_tokens_per_s = static_cast<double>(after_prefill) / decode_s;
  result.decode_requests_mean = decoding_s / decode_s;
  const double all_decoding_s = seconds(last_first, first_last);
  if (all_decoding_s > 0 && all_decoding > 0) {
    result.tokens_per_s = static_cast<double>(all_decoding) / all_decoding_s;
    result.tokens_per_s_per_request = *result.tokens_per_s / concurrency;
  }
  result.wall_tokens_per_s = static_cast<double>(concurrency) * gen / wall_s;
  result.ttft_p50_ms = izwi::cli::percentile(ttfts, 0.50);
  result.ttft_p99_ms = izwi::cli::percentile(ttfts, 0.99);
  return result;
}

// GFLOP of one decode token (izwi::bench::gflop_per_output): prompts of 2 and 3 tokens, one token
// generated.
std::optional<double> linear_gflop_per_token(izwi::Engine& engine, std::mt19937& rng) {
  izwi::bench::PromptStep steps[2];
  for (int32_t n : {2, 3}) {
    izwi::take_op_profile();
    izwi::Request r;
    r.prompt_ids = random_prompt(rng, n, engine.model_info().vocab_size);
    r.params.max_tokens = 1;
    engine.generate(r);
    steps[n - 2] = izwi::bench::prompt_step(izwi::take_op_profile());
  }
  return izwi::bench::gflop_per_output(steps[0], steps[1]);
}

// The plain libtorch path runs this bench again in a child process with OMP_WAIT_POLICY=PASSIVE,
// its best setting: its matrix products go through OpenBLAS, whose own threads spin after each
// call and lose the cores to OpenMP workers that spin too (half the speed when both spin).
// libgomp reads the policy once at start-up, hence the separate process.
double plain_libtorch_tokens_per_s(const std::string& model_dir, int32_t prompt_len, int32_t gen,
                                   const std::string& weight_dtype, int32_t threads) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = fmt::format(
      "OMP_WAIT_POLICY=PASSIVE {} --model {} --concurrency 1 --prompt-len {} --gen {} --shared-prefix 0 "
      "--kernels torch --weight-dtype {} --threads {} --json",
      izwi::cli::shell_quoted(self), izwi::cli::shell_quoted(model_dir), prompt_len, gen,
      izwi::cli::shell_quoted(weight_dtype), threads);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot start " + command);
  std::string output, last_line;
  char buffer[4096];
  while (fgets(buffer, sizeof(buffer), pipe.get()) != nullptr) output += buffer;
  if (pclose(pipe.release()) != 0) throw std::runtime_error("the plain libtorch run failed:\n" + output);
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last_line = line;
  }
  return nlohmann::json::parse(last_line).at("results").at(0).at("tokens_per_s").get<double>();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Benchmark izwi decode throughput against the memory-bandwidth roofline"};
  std::string model_dir, concurrency_list = "1,4,16,64", kernels = "fast", weight_dtype = "auto", cpu_kernels = "auto",
                         kv_cache_dtype = "auto", device_name = "cpu", dtype = "float32";
  int32_t prompt_len = 128, gen = 128, shared_prefix = 512, prefill_len = 512, threads = 0, max_tokens_per_step = 0;
  bool json = false, no_retain = false, no_cuda_graphs = false;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared, {izwi::cli::kModelOption | izwi::cli::kDeviceOptions | izwi::cli::kOutputOptions, "Model folder"});
  app.add_option("--concurrency", concurrency_list, "Concurrent requests per run")->capture_default_str();
  app.add_option("--prompt-len", prompt_len, "Prompt tokens per request")->capture_default_str();
  app.add_option("--gen", gen, "Generated tokens per request")->capture_default_str();
  app.add_option("--shared-prefix", shared_prefix, "Prefix length for the prefix-cache TTFT check; 0 = skip")
      ->capture_default_str();
  app.add_option("--prefill-len", prefill_len,
                 "Prompt length of the prefill (TTFT) run, at most the model's context - 1; 0 = skip")
      ->capture_default_str();
  app.add_option("--kernels", kernels, "fast (CPU kernels), torch (plain libtorch) or both")->capture_default_str();
  app.add_option("--cpu-kernels", cpu_kernels, "EngineConfig::cpu_kernels: auto, avx512_bf16, avx512, avx2, portable")
      ->capture_default_str();
  app.add_option("--kv-cache-dtype", kv_cache_dtype, "EngineConfig::kv_cache_dtype: auto, float32 or bfloat16")
      ->capture_default_str();
  app.add_option("--max-tokens-per-step", max_tokens_per_step,
                 "EngineConfig::max_tokens_per_step, the step's token budget (a longer prompt is prefilled in chunks "
                 "of it); 0 = 512, or the largest concurrency when larger")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--no-retain-freed-memory", no_retain, "EngineConfig::retain_freed_memory = false");
  app.add_flag("--no-cuda-graphs", no_cuda_graphs, "EngineConfig::use_cuda_graphs = false");
  CLI11_PARSE(app, argc, argv);
  // The shared --device, --dtype, --weight-dtype, --threads and --json (off the CPU the rooflines
  // come from that device's read bandwidth, a 1 GiB sum, and matrix-product peak, 8192-square
  // products in --dtype); --json ends the report with one JSON line.
  model_dir = shared.model;
  if (!shared.device.empty()) device_name = shared.device;
  if (!shared.dtype.empty()) dtype = shared.dtype;
  if (!shared.weight_dtype.empty()) weight_dtype = shared.weight_dtype;
  threads = shared.threads.value_or(0);
  json = shared.json;

  return izwi::cli::run_main("izwi-bench", [&] {
    const std::vector<int32_t> levels = izwi::cli::parse_id_list(concurrency_list, "--concurrency");
    if (kernels != "fast" && kernels != "torch" && kernels != "both")
      throw std::invalid_argument("--kernels must be fast, torch or both");
    const int32_t max_concurrency = *std::max_element(levels.begin(), levels.end());
    const int32_t positions = std::max({prompt_len + gen, shared_prefix + 16 + 1, prefill_len + 1});
    // The prefix run enables the prefix cache; at least 1024 blocks for its cached prefixes.
    izwi::EngineConfig config = izwi::bench::bench_engine_config(max_concurrency, positions, threads, weight_dtype);
    config.num_kv_blocks = std::max(1024, config.num_kv_blocks);
    if (max_tokens_per_step > 0) config.max_tokens_per_step = max_tokens_per_step;
    config.use_fast_kernels = kernels != "torch";
    config.cpu_kernels = cpu_kernels;
    config.kv_cache_dtype = kv_cache_dtype;
    config.retain_freed_memory = !no_retain;
    config.use_cuda_graphs = !no_cuda_graphs;
    config.device = device_name;
    config.dtype = dtype;
    izwi::cli::apply_shared_engine_options(shared, config);  // the same values, and -v / -q's log level
    config.validate();
    // The engine's own parse of the device and dtype (and its thread setup, which the engines do anyway).
    const izwi::Backend backend(izwi::BackendOptions::from_config(config));
    const at::Device device = backend.device();
    if (kernels == "both" && !device.is_cpu()) throw std::invalid_argument("--kernels both compares CPU paths only");

    std::mt19937 rng(1234);
    nlohmann::json report;
    std::vector<RunResult> results;
    double bandwidth = 0;
    std::vector<double> bandwidth_samples;  // before and after the concurrency-1 run
    const double fma_peak = device.is_cpu() ? izwi::bench::probe_fma_peak_gflops(threads)
                                            : izwi::bench::probe_device_matmul_gflops(device, backend.dtype());
    const auto probe_bandwidth = [&] {
      return device.is_cpu() ? izwi::bench::probe_bandwidth_gbps() : izwi::bench::probe_device_bandwidth_gbps(device);
    };
    // weight_bytes: what a decode step reads (the bandwidth roofline's); resident: every weight held.
    int64_t weight_bytes = 0, resident_weight_bytes = 0, load_peak_rss = 0, kv_cache_bytes = 0;
    izwi::set_op_profiling(true);
    izwi::StepProfile prefill;
    double prefill_ttft_ms = 0;
    std::optional<double> gflop_per_token;
    {
      izwi::Engine engine(model_dir, config);  // sets the thread count before measuring bandwidth
      weight_bytes = engine.model_info().decode_weight_bytes;
      resident_weight_bytes = engine.model_info().weight_bytes;
      load_peak_rss = peak_rss_bytes();  // the load's, KV pool included, before any step
      kv_cache_bytes = engine.model_info().kv_cache_bytes;
      run_concurrency(engine, 1, 16, 8, rng);  // warm-up
      gflop_per_token = linear_gflop_per_token(engine, rng);
      for (int32_t c : levels) {
        const bool bracket = c == 1 || bandwidth_samples.empty();
        if (bracket) bandwidth_samples.push_back(probe_bandwidth());
        results.push_back(run_concurrency(engine, c, prompt_len, gen, rng));
        if (bracket) bandwidth_samples.push_back(probe_bandwidth());
      }
      bandwidth = (bandwidth_samples[0] + bandwidth_samples[1]) / 2;
      if (prefill_len > 0) {
        // A model with a shorter context (the tests' tiny ones) prefills all it can take.
        prefill_len = std::min(prefill_len, engine.model_info().max_positions - 1);
        izwi::take_op_profile();
        izwi::Request r;
        r.prompt_ids = random_prompt(rng, prefill_len, engine.model_info().vocab_size);
        r.params.max_tokens = 1;
        prefill_ttft_ms = engine.generate(r).timings.ttft_ms;
        for (const auto& [key, entry] : izwi::take_op_profile()) {
          izwi::OpProfileEntry& sum = prefill[key.first];
          sum.calls += entry.calls;
          sum.flop += entry.flop;
          sum.seconds += entry.seconds;
        }
      }
    }
    // Off the CPU: the split of a decode step, from eager steps with a device wait around each op.
    std::vector<RunResult> op_split;
    if (!device.is_cpu()) {
      izwi::EngineConfig eager = config;
      eager.use_cuda_graphs = false;
      izwi::Engine engine(model_dir, eager);
      izwi::set_op_profile_fence(izwi::device_profile_fence(device));
      for (const int32_t c : {*std::min_element(levels.begin(), levels.end()), max_concurrency}) {
        if (op_split.empty() || op_split.back().concurrency != c)
          op_split.push_back(run_concurrency(engine, c, prompt_len, std::min(gen, 16), rng));
      }
      izwi::set_op_profile_fence(nullptr);
    }
    izwi::set_op_profiling(false);
    const double roofline_tps = bandwidth * 1e9 / static_cast<double>(weight_bytes);
    fmt::print("model {}  device {}  dtype {}  threads {}  kernels {} ({})  weight dtype {}  K/V cache {}\n", model_dir,
               device_name, dtype, at::get_num_threads(), config.use_fast_kernels ? "fast" : "torch", cpu_kernels,
               weight_dtype, kv_cache_dtype);
    fmt::print(
        "read bandwidth {:.1f} GB/s (before {:.1f}, after {:.1f}), {:.1f} MB of weights per decode step (of "
        "{:.1f} MB held) -> roofline {:.1f} tokens/s at batch 1\n",
        bandwidth, bandwidth_samples[0], bandwidth_samples[1], weight_bytes / 1e6, resident_weight_bytes / 1e6,
        roofline_tps);
    const char* peak_name = device.is_cpu() ? "FMA peak" : "matrix-product peak";
    if (gflop_per_token) {
      fmt::print(
          "{} {:.0f} GFLOP/s, {:.4g} GFLOP per token in the linear products ({:.2f} weight bytes per multiply-add) "
          "-> compute roofline {:.1f} tokens/s\n\n",
          peak_name, fma_peak, *gflop_per_token, static_cast<double>(weight_bytes) / (*gflop_per_token * 1e9 / 2),
          fma_peak / *gflop_per_token);
    } else {
      fmt::print("{} {:.0f} GFLOP/s; the linear products were not profiled: no FLOP figures\n\n", peak_name, fma_peak);
    }
    // tokens/s: while every request decodes ("-" where no such window exists); decode tok/s: after
    // the last prompt, over `decode reqs` requests on average (header comment). "model": the whole
    // step's throughput in weight GFLOP at tokens/s; "linear": the linear kernels alone, over their
    // calls of exactly `concurrency` tokens (the decode steps in which every request decodes).
    fmt::print("{:>11} {:>12} {:>16} {:>13} {:>11} {:>12} {:>12} {:>12} {:>12} {:>12} {:>14} {:>14}\n", "concurrency",
               "tokens/s", "tokens/s/request", "decode tok/s", "decode reqs", "wall tok/s", "TTFT p50 ms",
               "TTFT p99 ms", "model GF/s", "of peak", "linear GFLOP/s", "linear of peak");
    const auto optional_json = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    const auto optional_cell = [](const std::optional<double>& v, int width, int precision) {
      return v ? fmt::format("{:>{}.{}f}", *v, width, precision) : fmt::format("{:>{}}", "-", width);
    };
    for (const RunResult& r : results) {
      std::optional<double> gflops, gflops_of_peak;
      if (r.tokens_per_s && gflop_per_token)
        gflops = *r.tokens_per_s * *gflop_per_token, gflops_of_peak = *gflops / fma_peak;
      const double linear_gflops = achieved_gflops(part(r.decode, izwi::ProfiledOp::Linear));
      fmt::print("{:>11} {} {:>16.1f} {:>13.1f} {:>11.1f} {:>12.1f} {:>12.1f} {:>12.1f} {} {} {:>14.1f} {:>14.2f}\n",
                 r.concurrency, optional_cell(r.tokens_per_s, 12, 1), r.tokens_per_s_per_request, r.decode_tokens_per_s,
                 r.decode_requests_mean, r.wall_tokens_per_s, r.ttft_p50_ms, r.ttft_p99_ms,
                 optional_cell(gflops, 12, 1), optional_cell(gflops_of_peak, 12, 2), linear_gflops,
                 linear_gflops / fma_peak);
      report["results"].push_back({{"concurrency", r.concurrency},
                                   {"tokens_per_s", optional_json(r.tokens_per_s)},
                                   {"tokens_per_s_per_request", r.tokens_per_s_per_request},
                                   {"decode_tokens_per_s", r.decode_tokens_per_s},
                                   {"decode_requests_mean", r.decode_requests_mean},
                                   {"wall_tokens_per_s", r.wall_tokens_per_s},
                                   {"ttft_p50_ms", r.ttft_p50_ms},
                                   {"ttft_p99_ms", r.ttft_p99_ms},
                                   {"model_gflop_per_s", optional_json(gflops)},
                                   {"model_compute_fraction", optional_json(gflops_of_peak)},
                                   {"linear_gflop_per_s", linear_gflops},
                                   {"compute_fraction", linear_gflops / fma_peak},
                                   {"decode_step", breakdown_json(step_breakdown(r.decode))}});
    }
    const auto print_breakdown = [](const std::vector<RunResult>& runs) {
      fmt::print("{:>11} {:>7} {:>9} {:>9} {:>9} {:>10} {:>10} {:>14} {:>9}\n", "concurrency", "steps", "replayed",
                 "step", "linear", "attention", "other ops", "rest of model", "engine");
      for (const RunResult& r : runs) {
        const StepBreakdown b = step_breakdown(r.decode);
        fmt::print("{:>11} {:>7} {:>9} {:>9.2f} {:>9.2f} {:>10.2f} {:>10.2f} {:>14.2f} {:>9.2f}\n", r.concurrency,
                   b.steps, b.graph_replays, b.step, b.linear, b.attention, b.other_ops, b.rest_of_model, b.engine);
      }
    };
    fmt::print(
        "\ndecode step, ms per step of exactly `concurrency` tokens (engine = the step's bookkeeping around\n"
        "the model; rest of model = embedding, residual adds, head selection, sampling; replayed = steps\n"
        "replayed from a CUDA graph, whose ops are not timed)\n");
    print_breakdown(results);
    if (!op_split.empty()) {
      fmt::print(
          "\nthe same on {} without CUDA graphs, with a device wait around every op ({} tokens a request):\n"
          "what each part of a step executes, not the step's speed\n",
          device_name, std::min(gen, 16));
      print_breakdown(op_split);
      for (const RunResult& r : op_split) {
        report["op_split"].push_back(
            {{"concurrency", r.concurrency}, {"decode_step", breakdown_json(step_breakdown(r.decode))}});
      }
    }
    if (prefill_len > 0) {
      const double linear_gflops = achieved_gflops(prefill[izwi::ProfiledOp::Linear]);
      const double linear_share = prefill[izwi::ProfiledOp::Linear].seconds * 1e3 / prefill_ttft_ms;
      const double attention_share = prefill[izwi::ProfiledOp::Attention].seconds * 1e3 / prefill_ttft_ms;
      fmt::print(
          "\nprefill of {} tokens in chunks of up to {}: TTFT {:.1f} ms, linear layers {:.1f} GFLOP/s = {:.2f} of the "
          "FMA peak, {:.0f}% of the TTFT; attention {:.0f}%\n",
          prefill_len, config.max_tokens_per_step, prefill_ttft_ms, linear_gflops, linear_gflops / fma_peak,
          100 * linear_share, 100 * attention_share);
      report["prefill"] = {{"prompt_tokens", prefill_len},
                           {"max_tokens_per_step", config.max_tokens_per_step},
                           {"steps", prefill[izwi::ProfiledOp::Step].calls},
                           {"ttft_ms", prefill_ttft_ms},
                           {"linear_share_of_ttft", linear_share},
                           {"attention_share_of_ttft", attention_share},
                           {"linear_gflop_per_s", linear_gflops},
                           {"compute_fraction", linear_gflops / fma_peak}};
    }
    report["fma_peak_gflops"] = fma_peak;
    report["device"] = device_name;
    report["dtype"] = dtype;
    report["bandwidth_gbps"] = bandwidth;
    report["bandwidth_samples_gbps"] = bandwidth_samples;
    report["weight_bytes"] = weight_bytes;
    report["resident_weight_bytes"] = resident_weight_bytes;
    report["gflop_per_token"] = optional_json(gflop_per_token);
    report["load_peak_rss_bytes"] = load_peak_rss;
    report["kv_cache_bytes"] = kv_cache_bytes;
    if (device.is_cpu()) {
      // The weights (every matrix a step reads: untied embeddings excluded) and the KV pool are
      // the memory a run needs; the rest is the runtime and what the load left behind.
      fmt::print(
          "peak RSS after the load {:.1f} MB = {:.2f}x the weights ({:.1f} MB); without the KV pool "
          "({:.1f} MB) {:.2f}x\n",
          load_peak_rss / 1e6, double(load_peak_rss) / weight_bytes, weight_bytes / 1e6, kv_cache_bytes / 1e6,
          double(load_peak_rss - kv_cache_bytes) / weight_bytes);
    }
    const auto single =
        std::find_if(results.begin(), results.end(), [](const RunResult& r) { return r.concurrency == 1; });
    if (single != results.end()) {
      // With one request the two windows are the same (its first token to its last).
      const double single_tps = single->decode_tokens_per_s;
      report["roofline_fraction"] = single_tps / roofline_tps;
      fmt::print("\nroofline fraction at concurrency 1: {:.2f}\n", single_tps / roofline_tps);
      for (const RunResult& r : results) {
        if (r.concurrency != 1 && r.tokens_per_s)
          fmt::print("concurrency {:>3}: {:.1f}x the total throughput of concurrency 1\n", r.concurrency,
                     *r.tokens_per_s / single_tps);
      }
    }

    if (kernels == "both" && single != results.end()) {
      const double torch_tps = plain_libtorch_tokens_per_s(model_dir, prompt_len, gen, weight_dtype, threads);
      report["torch_tokens_per_s"] = torch_tps;
      fmt::print(
          "plain libtorch path at concurrency 1 (own process, OMP_WAIT_POLICY=PASSIVE): {:.1f} tokens/s; "
          "CPU kernels are {:.2f}x faster\n",
          torch_tps, single->decode_tokens_per_s / torch_tps);
    }

    if (shared_prefix > 0) {
      izwi::EngineConfig prefix_config = config;
      prefix_config.enable_prefix_cache = true;
      izwi::Engine engine(model_dir, prefix_config);
      const int32_t vocab = engine.model_info().vocab_size;
      run_concurrency(engine, 1, 16, 2, rng);
      const std::vector<int32_t> prefix = random_prompt(rng, shared_prefix, vocab);
      std::vector<double> ttft;
      for (int i = 0; i < 2; ++i) {
        izwi::Request r;
        r.prompt_ids = prefix;
        const std::vector<int32_t> tail = random_prompt(rng, 16, vocab);
        r.prompt_ids.insert(r.prompt_ids.end(), tail.begin(), tail.end());
        r.params.max_tokens = 1;
        const izwi::Output out = engine.generate(r);
        ttft.push_back(out.timings.ttft_ms);
        if (i == 1)
          report["shared_prefix"] = {{"prefix_tokens", shared_prefix}, {"cached_tokens", out.prefix_cache_hit_tokens}};
      }
      report["shared_prefix"]["first_ttft_ms"] = ttft[0];
      report["shared_prefix"]["second_ttft_ms"] = ttft[1];
      report["shared_prefix"]["ratio"] = ttft[1] / ttft[0];
      fmt::print("shared {}-token prefix: TTFT {:.1f} ms, then {:.1f} ms with the prefix cached ({:.0f}%)\n",
                 shared_prefix, ttft[0], ttft[1], 100 * ttft[1] / ttft[0]);
    }
    if (json) std::cout << report.dump() << "\n";
    return 0;
  });
}
