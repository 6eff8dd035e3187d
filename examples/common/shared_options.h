#pragma once
// The options every izwi command line shares, declared once so each tool spells, documents and
// groups them the same way in --help ("Model", "Engine", "Sampling", "Output"). A tool adds the
// groups it can honour (izwi-tokenize has no engine, izwi-codec no sampling) and its own options.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "izwi/sampling.h"

namespace izwi::cli {

/// The --help group names, in the order tools add them.
inline constexpr const char* kModelGroup = "Model";
inline constexpr const char* kEngineGroup = "Engine";
inline constexpr const char* kSamplingGroup = "Sampling";
inline constexpr const char* kOutputGroup = "Output";

/// Which shared options a tool takes; a bit set.
enum SharedGroups : unsigned {
  kModelOption = 1u << 0,      ///< --model (required).
  kEngineOptions = 1u << 1,    ///< --config --device --dtype --weight-dtype --kv-blocks --threads.
  kThreadsOption = 1u << 2,    ///< --threads alone (tools that run on the CPU without an engine).
  kDeviceOptions = 1u << 6,    ///< --device --dtype --weight-dtype --threads (benches that size their own pool).
  kSamplingOptions = 1u << 3,  ///< --temperature --top-k --top-p --repetition-penalty --seed.
  kMaxTokensOption = 1u << 4,  ///< --max-tokens (in the Sampling group).
  kOutputOptions = 1u << 5,    ///< --json -v/--verbose -q/--quiet.
  kEngineTool = kModelOption | kEngineOptions | kSamplingOptions | kMaxTokensOption | kOutputOptions,
};

/// What the shared options were given. Optional fields stay unset unless their flag is given, so
/// the library's (and the model folder's generation_config.json) defaults apply.
struct SharedOptions {
  std::string model;                 ///< --model
  std::string config_file;           ///< --config: an EngineConfig JSON file
  std::string device;                ///< --device (over --config's)
  std::string dtype;                 ///< --dtype
  std::string weight_dtype;          ///< --weight-dtype
  std::optional<int32_t> threads;    ///< --threads
  std::optional<int32_t> kv_blocks;  ///< --kv-blocks
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> repetition_penalty;
  std::optional<uint64_t> seed;
  std::optional<int32_t> max_tokens;  ///< --max-tokens (or the tool's old name for it)
  bool json = false;
  int verbose = 0;  ///< -v: info, -vv: debug
  bool quiet = false;

  /// The log level -v / -q ask for; empty = leave it (the config's, "warn" by default).
  std::string log_level() const;
  /// The sampling flags given; the others unset (the model's defaults).
  SamplingParams sampling() const { return {temperature, top_k, top_p, repetition_penalty}; }
};

/// How a tool words its shared options.
struct SharedOptionSpec {
  unsigned groups = kEngineTool;
  std::string model_help = "Model folder (config.json + safetensors)";
  std::string model_alias;  ///< Another accepted name of --model, e.g. "--tokenizer".
  std::string max_tokens_help = "New tokens at most";
  std::string max_tokens_alias;  ///< The tool's former name of --max-tokens, e.g. "--max-new".
  std::string temperature_help = "Sampling temperature; 0 = greedy (default: the model's)";
};

/// Sets the library's log level as -v / -q ask (tools without an engine; an engine takes it from
/// its EngineConfig::log_level).
void apply_log_level(const SharedOptions& options);

/// Adds the shared options of `spec.groups` to `app`, writing into `options` (which must outlive
/// parsing), grouped as the constants above name. Returns --model's option.
CLI::Option* add_shared_options(CLI::App& app, SharedOptions& options, const SharedOptionSpec& spec = {});

}  // namespace izwi::cli
