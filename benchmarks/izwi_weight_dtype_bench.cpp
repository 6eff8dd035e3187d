// izwi-weight-dtype-bench: batch-1 decode speed of one model under several weight dtypes, as
// ratios measured in one run.
//
//   izwi-weight-dtype-bench --model DIR [--weight-dtypes auto,int8,int4] [--rounds 12] [--tokens 24]
//                           [--prompt-len 16] [--threads N] [--json]
//
// A shared VM's read bandwidth drifts by a factor of two within minutes (docs/quantization.md),
// which is more than the effect measured: runs of one dtype after another compare the machine's
// moods, not the dtypes. So every dtype's engine is loaded at once (each in a process of its own:
// DtypeWorker) and the rounds interleave them: each round probes the read bandwidth, then decodes --tokens tokens at
// batch 1 with each engine in turn (the order rotated per round, so none always runs first). A round's ratio is a
// dtype's tokens/s over the first dtype's in the same round, seconds apart; the report gives each
// ratio's median over the rounds with its range, and each dtype's median fraction of the roofline
// (read bandwidth / the bytes a decode step reads, ModelInfo::decode_weight_bytes, scales
// included). With --json the last line is {"results":[{"weight_dtype","mb_per_step",
// "tokens_per_s_p50","ratio_p50","ratio_min","ratio_max","roofline_fraction_p50"}],...}.

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "bench_engine_config.h"
#include "common/cli_main.h"
#include "common/cli_parsing.h"
#include "common/engine_options.h"
#include "common/percentile.h"
#include "common/shared_options.h"
#include "izwi/engine.h"
#include "roofline_probes.h"

namespace {

using Clock = std::chrono::steady_clock;

/// Decode tokens/s of one greedy batch-1 request: the tokens after the first over the time from
/// the first token's delivery to the last's, so the prompt's prefill is not counted.
double decode_tokens_per_s(izwi::Engine& engine, int32_t prompt_len, int32_t tokens, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> id(0, engine.model_info().vocab_size - 1);
  izwi::Request request;
  for (int32_t i = 0; i < prompt_len; ++i) request.prompt_ids.push_back(id(rng));
  request.params.max_tokens = tokens + 1;
  request.params.min_tokens = tokens + 1;
  request.params.sampling.temperature = 0.0f;
  std::vector<Clock::time_point> times;
  std::promise<void> done;
  engine.generate_streaming(request, [&](const izwi::StreamChunk& chunk) {
    const auto now = Clock::now();
    for (size_t k = 0; k < chunk.tokens.size(); ++k) times.push_back(now);
    if (chunk.finished) done.set_value();
  });
  done.get_future().wait();
  if (times.size() != static_cast<size_t>(tokens + 1)) throw std::runtime_error("a request ended early");
  return tokens / std::chrono::duration<double>(times.back() - times.front()).count();
}

/// "auto, int8,int4" -> {"auto", "int8", "int4"}.
std::vector<std::string> dtype_names(const std::string& list) {
  std::vector<std::string> names;
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw std::invalid_argument("--weight-dtypes: empty entry in '" + list + "'");
    names.push_back(item);
  }
  return names;
}

/// One weight dtype's engine in a child process, driven a request at a time over pipes. Engines
/// in one process would each bring an OpenMP team; libgomp, counting more threads than cores,
/// then puts idle workers to sleep between kernels, and every kernel of the running engine pays a
/// futex wake-up (measured: int4 on the llama 100m shape at 200 instead of 550 tokens/s). A
/// process per engine keeps one team per process, as a lone izwi-bench run has.
class DtypeWorker {
 public:
  /// Forks before this process has started any OpenMP team (a child inherits none of its threads).
  DtypeWorker(const std::string& model, const izwi::EngineConfig& config, int32_t prompt_len) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the bench (later children hold our pipes' ends)
      close(to_child[1]);
      close(from_child[0]);
      serve(model, config, prompt_len, to_child[0], from_child[1]);  // never returns
    }
    close(to_child[0]);
    close(from_child[1]);
    to_child_ = to_child[1];
    from_child_ = from_child[0];
    decode_weight_bytes_ = static_cast<int64_t>(reply());
  }
  DtypeWorker(const DtypeWorker&) = delete;
  DtypeWorker& operator=(const DtypeWorker&) = delete;
  ~DtypeWorker() {
    const int32_t stop = 0;
    (void)!write(to_child_, &stop, sizeof(stop));
    close(to_child_);
    close(from_child_);
    waitpid(pid_, nullptr, 0);
  }

  int64_t decode_weight_bytes() const { return decode_weight_bytes_; }

  /// decode_tokens_per_s of a new request of `tokens` decode tokens in the child.
  double tokens_per_s(int32_t tokens) {
    if (write(to_child_, &tokens, sizeof(tokens)) != sizeof(tokens)) throw std::runtime_error("the worker is gone");
    return reply();
  }

 private:
  struct Reply {
    double value = 0;
    char error[512] = {};  ///< Set when the child failed; value is then meaningless.
  };

  [[noreturn]] static void serve(const std::string& model, const izwi::EngineConfig& config, int32_t prompt_len, int in,
                                 int out) {
    Reply r;
    try {
      izwi::Engine engine(model, config);
      std::mt19937 rng(1234);
      decode_tokens_per_s(engine, prompt_len, 4, rng);  // warm-up
      r.value = static_cast<double>(engine.model_info().decode_weight_bytes);
      (void)!write(out, &r, sizeof(r));
      for (int32_t tokens = 0; read(in, &tokens, sizeof(tokens)) == sizeof(tokens) && tokens > 0;) {
        r.value = decode_tokens_per_s(engine, prompt_len, tokens, rng);
        (void)!write(out, &r, sizeof(r));
      }
    } catch (const std::exception& e) {
      std::snprintf(r.error, sizeof(r.error), "%s", e.what());
      (void)!write(out, &r, sizeof(r));
    }
    _exit(0);  // no destructors of the parent's objects in the child
  }

  double reply() {
    Reply r;
    if (read(from_child_, &r, sizeof(r)) != sizeof(r)) throw std::runtime_error("the worker ended without a reply");
    if (r.error[0] != '\0') throw std::runtime_error(r.error);
    return r.value;
  }

  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  int64_t decode_weight_bytes_ = 0;
};

struct DtypeRuns {
  std::string weight_dtype;
  std::unique_ptr<DtypeWorker> worker;
  std::vector<double> tokens_per_s, ratio, roofline_fraction;  // one entry per round
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Batch-1 decode speed under several weight dtypes, interleaved in one run"};
  std::string dtype_list = "auto,int8,int4";
  int32_t rounds = 12, tokens = 24, prompt_len = 16;
  izwi::cli::SharedOptions shared;
  izwi::cli::add_shared_options(
      app, shared,
      {izwi::cli::kModelOption | izwi::cli::kThreadsOption | izwi::cli::kOutputOptions, "Text model folder"});
  app.add_option("--weight-dtypes", dtype_list, "Weight dtypes to compare; ratios are to the first")
      ->capture_default_str();
  app.add_option("--rounds", rounds, "Interleaved rounds")->capture_default_str();
  app.add_option("--tokens", tokens, "Decode tokens per dtype and round")->capture_default_str();
  app.add_option("--prompt-len", prompt_len, "Prompt tokens per request")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  return izwi::cli::run_main("izwi-weight-dtype-bench", [&] {
    if (rounds < 1) throw std::invalid_argument("--rounds must be at least 1");
    if (tokens < 2) throw std::invalid_argument("--tokens must be at least 2");
    if (prompt_len < 1) throw std::invalid_argument("--prompt-len must be at least 1");
    const std::vector<std::string> names = dtype_names(dtype_list);
    if (names.size() < 2) throw std::invalid_argument("--weight-dtypes needs at least two dtypes to compare");
    std::vector<DtypeRuns> runs;
    for (const std::string& name : names) {
      DtypeRuns run;
      run.weight_dtype = name;
      izwi::EngineConfig config =
          izwi::bench::bench_engine_config(1, prompt_len + tokens + 1, shared.threads.value_or(0), name);
      izwi::cli::apply_shared_engine_options(shared, config);  // -v / -q's log level
      run.worker = std::make_unique<DtypeWorker>(shared.model, config, prompt_len);
      runs.push_back(std::move(run));
    }
    std::vector<double> bandwidths;
    for (int32_t round = 0; round < rounds; ++round) {
      const double bandwidth = izwi::bench::probe_bandwidth_gbps();
      bandwidths.push_back(bandwidth);
      std::vector<double> tps(runs.size());
      for (size_t k = 0; k < runs.size(); ++k) {
        const size_t i = (k + static_cast<size_t>(round)) % runs.size();
        tps[i] = runs[i].worker->tokens_per_s(tokens);
      }
      for (size_t i = 0; i < runs.size(); ++i) {
        const double step_bytes = static_cast<double>(runs[i].worker->decode_weight_bytes());
        runs[i].tokens_per_s.push_back(tps[i]);
        runs[i].ratio.push_back(tps[i] / tps[0]);
        runs[i].roofline_fraction.push_back(tps[i] * step_bytes / (bandwidth * 1e9));
      }
    }

    const double bandwidth_p50 = izwi::cli::percentile(bandwidths, 0.5);
    fmt::print(
        "{} rounds of {} decode tokens at batch 1 per dtype; read bandwidth {:.1f} GB/s (p50), {:.1f}-{:.1f}\n\n",
        rounds, tokens, bandwidth_p50, *std::min_element(bandwidths.begin(), bandwidths.end()),
        *std::max_element(bandwidths.begin(), bandwidths.end()));
    fmt::print("{:>14} {:>12} {:>14} {:>18} {:>17}\n", "weight dtype", "MB per step", "tokens/s p50",
               fmt::format("vs {} p50 (range)", runs[0].weight_dtype), "roofline frac p50");
    nlohmann::json results = nlohmann::json::array();
    for (const DtypeRuns& run : runs) {
      const double mb = static_cast<double>(run.worker->decode_weight_bytes()) / 1e6;
      const double ratio_min = *std::min_element(run.ratio.begin(), run.ratio.end());
      const double ratio_max = *std::max_element(run.ratio.begin(), run.ratio.end());
      const double ratio_p50 = izwi::cli::percentile(run.ratio, 0.5);
      fmt::print("{:>14} {:>12.1f} {:>14.1f} {:>18} {:>17.2f}\n", run.weight_dtype, mb,
                 izwi::cli::percentile(run.tokens_per_s, 0.5),
                 fmt::format("{:.2f}x ({:.2f}-{:.2f})", ratio_p50, ratio_min, ratio_max),
                 izwi::cli::percentile(run.roofline_fraction, 0.5));
      results.push_back({{"weight_dtype", run.weight_dtype},
                         {"mb_per_step", mb},
                         {"tokens_per_s_p50", izwi::cli::percentile(run.tokens_per_s, 0.5)},
                         {"ratio_p50", ratio_p50},
                         {"ratio_min", ratio_min},
                         {"ratio_max", ratio_max},
                         {"roofline_fraction_p50", izwi::cli::percentile(run.roofline_fraction, 0.5)}});
    }
    if (shared.json) {
      const nlohmann::json report{
          {"rounds", rounds}, {"tokens", tokens}, {"bandwidth_gbps_p50", bandwidth_p50}, {"results", results}};
      fmt::print("{}\n", report.dump());
    }
    return 0;
  });
}
