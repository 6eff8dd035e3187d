#include "common/shared_options.h"

#include "common/logging.h"

namespace izwi::cli {

namespace {

template <typename T>
CLI::Option* add_optional(CLI::App& app, const std::string& name, std::optional<T>& target, const std::string& help) {
  return app.add_option_function<T>(
      name, [&target](const T& value) { target = value; }, help);
}

}  // namespace

std::string SharedOptions::log_level() const {
  if (quiet) return "error";
  if (verbose >= 2) return "debug";
  if (verbose == 1) return "info";
  return "";
}

void apply_log_level(const SharedOptions& options) {
  if (const std::string level = options.log_level(); !level.empty()) set_log_level(level);
}

CLI::Option* add_shared_options(CLI::App& app, SharedOptions& o, const SharedOptionSpec& spec) {
  CLI::Option* model = nullptr;
  if (spec.groups & kModelOption) {
    const std::string names = spec.model_alias.empty() ? "--model" : "--model," + spec.model_alias;
    model = app.add_option(names, o.model, spec.model_help)->required()->group(kModelGroup);
  }
  if (spec.groups & kEngineOptions) {
    app.add_option("--config", o.config_file, "EngineConfig JSON file: any of its fields")->group(kEngineGroup);
  }
  if (spec.groups & (kEngineOptions | kDeviceOptions)) {
    app.add_option("--device", o.device, "cpu, cuda, cuda:N or mps")->group(kEngineGroup);
    app.add_option("--dtype", o.dtype, "Compute dtype: float32, bfloat16 or float16")->group(kEngineGroup);
    app.add_option("--weight-dtype", o.weight_dtype,
                   "Weight storage: auto (= dtype; a bf16 checkpoint stays bf16 on the CPU), float32, bfloat16, int8 "
                   "or int4[:32|:64] (CPU in float32; int4 also on cuda in bfloat16; docs/quantization.md)")
        ->group(kEngineGroup);
  }
  if (spec.groups & kEngineOptions) {
    add_optional(app, "--kv-blocks", o.kv_blocks,
                 "KV pool blocks (default: what this run's request needs; --config's when it sets the pool)")
        ->group(kEngineGroup);
  }
  if (spec.groups & (kEngineOptions | kDeviceOptions | kThreadsOption)) {
    add_optional(app, "--threads", o.threads, "CPU threads (default: OMP_NUM_THREADS, else every core)")
        ->check(CLI::NonNegativeNumber)
        ->group(kEngineGroup);
  }
  if (spec.groups & kMaxTokensOption) {
    const std::string names = spec.max_tokens_alias.empty() ? "--max-tokens" : "--max-tokens," + spec.max_tokens_alias;
    add_optional(app, names, o.max_tokens, spec.max_tokens_help)->group(kSamplingGroup);
  }
  if (spec.groups & kSamplingOptions) {
    add_optional(app, "--temperature", o.temperature, spec.temperature_help)->group(kSamplingGroup);
    add_optional(app, "--top-k", o.top_k, "Keep the k most likely tokens; 0 = off (default: the model's)")
        ->group(kSamplingGroup);
    add_optional(app, "--top-p", o.top_p, "Nucleus mass in (0, 1]; 1 = off (default: the model's)")
        ->group(kSamplingGroup);
    add_optional(app, "--repetition-penalty", o.repetition_penalty, "> 1 discourages repeats (default: the model's)")
        ->group(kSamplingGroup);
    add_optional(app, "--seed", o.seed, "Sampling seed (reproducible sampling)")->group(kSamplingGroup);
  }
  if (spec.groups & kOutputOptions) {
    app.add_flag("--json", o.json, "Machine-readable JSON output (and no progress bar)")->group(kOutputGroup);
    auto* verbose = app.add_flag("-v,--verbose", o.verbose, "Log more: -v info, -vv debug")->group(kOutputGroup);
    app.add_flag("-q,--quiet", o.quiet, "Log errors only")->group(kOutputGroup)->excludes(verbose);
  }
  return model;
}

}  // namespace izwi::cli
