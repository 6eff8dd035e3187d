#include "quant/quantization_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "common/check.h"

namespace izwi {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// GPTQ and AWQ ship 2-, 3- and 8-bit variants too; izwi reads the 4-bit ones.
void read_int4_bits(const JsonFields& q, const std::string& key, QuantizationConfig& config) {
  config.bits = q.get<int64_t>(key);
  if (config.bits == 2 || config.bits == 3 || config.bits == 8) {
    fail(ErrorCode::Unsupported, "{}: field '{}' is {}; only 4-bit {} checkpoints are supported", q.origin(), key,
         config.bits, quant_method_name(config.method));
  }
  if (config.bits != 4)
    fail(ErrorCode::InvalidFormat, "{}: field '{}' is {}, not a bit width", q.origin(), key, config.bits);
}

// Released checkpoints use 32, 64 or 128 (or -1, per channel); the readers check it divides each row.
void read_group_size(const JsonFields& q, const std::string& key, QuantizationConfig& config) {
  config.group_size = q.get<int64_t>(key);
  if (config.group_size == -1 || (config.group_size >= 32 && config.group_size <= 128)) return;
  if (config.group_size > 0) {
    fail(ErrorCode::Unsupported, "{}: field '{}' is {}; supported: 32 to 128, or -1 (per channel)", q.origin(), key,
         config.group_size);
  }
  fail(ErrorCode::InvalidFormat, "{}: field '{}' is {}, not a group size (positive, or -1 per channel)", q.origin(),
       key, config.group_size);
}

void read_gptq(const JsonFields& q, QuantizationConfig& config) {
  read_int4_bits(q, "bits", config);
  read_group_size(q, "group_size", config);
  config.desc_act = q.get_or<bool>("desc_act", false);
  config.sym = q.get_or<bool>("sym", true);
  // AutoGPTQ writes checkpoint_format, GPTQModel format; both default to the v1 layout.
  const std::string key = q.has("checkpoint_format") ? "checkpoint_format" : "format";
  const std::string format = q.get_or<std::string>(key, "gptq");
  if (format == "gptq") {
    config.zeros_minus_one = true;
  } else if (format != "gptq_v2") {
    fail(ErrorCode::Unsupported, "{}: field '{}' is '{}'; supported: gptq, gptq_v2", q.origin(), key, format);
  }
}

void read_awq(const JsonFields& q, QuantizationConfig& config) {
  // transformers writes bits / group_size; AutoAWQ's own quant_config.json w_bit / q_group_size.
  read_int4_bits(q, q.has("w_bit") ? "w_bit" : "bits", config);
  read_group_size(q, q.has("q_group_size") ? "q_group_size" : "group_size", config);
  config.sym = false;
  // GEMV packs [out, in / 8] and GEMV_fast, Marlin and IPEX their own layouts; exllama and the
  // others are kernels over GEMM's layout, but a checkpoint names the one it was packed for.
  const std::string version = q.get_or<std::string>("version", "gemm");
  if (lower(version) != "gemm") {
    fail(ErrorCode::Unsupported, "{}: field 'version' is '{}'; supported: gemm", q.origin(), version);
  }
  if (!q.get_or<bool>("zero_point", true)) {
    fail(ErrorCode::Unsupported, "{}: field 'zero_point' is false; AWQ GEMM checkpoints have zero points", q.origin());
  }
}

void read_fp8(const JsonFields& q, QuantizationConfig& config) {
  config.bits = 8;
  if (q.has("weight_block_size")) {
    fail(ErrorCode::Unsupported,
         "{}: field 'weight_block_size' is {}; block-wise FP8 is not supported (per-tensor or per-channel scales)",
         q.origin(), q.json().at("weight_block_size").dump());
  }
  const std::string fmt = q.get_or<std::string>("fmt", "e4m3");
  if (fmt != "e4m3") fail(ErrorCode::Unsupported, "{}: field 'fmt' is '{}'; supported: e4m3", q.origin(), fmt);
  const std::string scheme = q.get_or<std::string>("activation_scheme", "dynamic");
  if (scheme != "dynamic" && scheme != "static") {
    fail(ErrorCode::InvalidFormat, "{}: field 'activation_scheme' is '{}', not dynamic or static", q.origin(), scheme);
  }
  config.static_activations = scheme == "static";
}

// compressed-tensors: each config group quantizes some modules; izwi reads fp8 weights in any of them.
void read_compressed_tensors(const JsonFields& q, QuantizationConfig& config) {
  const std::string format = q.get_or<std::string>("format", "");
  if (format != "float-quantized" && format != "naive-quantized") {
    fail(ErrorCode::Unsupported, "{}: field 'format' is '{}'; supported: float-quantized (FP8 weights)", q.origin(),
         format);
  }
  if (q.has("kv_cache_scheme")) {
    fail(ErrorCode::Unsupported, "{}: field 'kv_cache_scheme' is set; quantized KV caches are not supported",
         q.origin());
  }
  const std::optional<JsonFields> groups = q.object("config_groups");
  if (!groups || groups->json().empty()) {
    fail(ErrorCode::InvalidFormat, "{}: field 'config_groups' is missing or empty", q.origin());
  }
  config.bits = 8;
  for (auto it = groups->json().begin(); it != groups->json().end(); ++it) {
    const std::optional<JsonFields> group = groups->object(it.key());
    if (!group) fail(ErrorCode::InvalidFormat, "{}: field '{}' is null", groups->origin(), it.key());
    const std::optional<JsonFields> weights = group->object("weights");
    if (!weights) fail(ErrorCode::InvalidFormat, "{}: field 'weights' is missing", group->origin());
    const std::string type = weights->get<std::string>("type");
    const int64_t bits = weights->get<int64_t>("num_bits");
    if (type != "float" || bits != 8) {
      fail(ErrorCode::Unsupported, "{}: weights of type '{}' with num_bits {}; supported: float, 8 (FP8 e4m3)",
           weights->origin(), type, bits);
    }
    const std::string strategy = weights->get<std::string>("strategy");
    if (strategy != "tensor" && strategy != "channel") {
      fail(ErrorCode::Unsupported, "{}: field 'strategy' is '{}'; supported: tensor, channel", weights->origin(),
           strategy);
    }
    if (!weights->get_or<bool>("symmetric", true)) {
      fail(ErrorCode::Unsupported, "{}: field 'symmetric' is false; FP8 weights have no zero point", weights->origin());
    }
    if (weights->get_or<bool>("dynamic", false)) {
      fail(ErrorCode::Unsupported, "{}: field 'dynamic' is true; weights need stored scales", weights->origin());
    }
    if (const std::optional<JsonFields> inputs = group->object("input_activations")) {
      if (!inputs->get_or<bool>("dynamic", true)) config.static_activations = true;
    }
  }
}

}  // namespace

const char* quant_method_name(QuantMethod method) {
  switch (method) {
    case QuantMethod::None:
      return "none";
    case QuantMethod::Gptq:
      return "GPTQ";
    case QuantMethod::Awq:
      return "AWQ";
    case QuantMethod::Fp8:
      return "FP8";
  }
  return "?";
}

QuantizationConfig read_quantization_config(const JsonFields& config) {
  QuantizationConfig out;
  const std::optional<JsonFields> q = config.object("quantization_config");
  if (!q) return out;
  out.origin = q->origin();
  const std::string method = lower(q->get<std::string>("quant_method"));
  if (method == "gptq") {
    out.method = QuantMethod::Gptq;
    read_gptq(*q, out);
  } else if (method == "awq") {
    out.method = QuantMethod::Awq;
    read_awq(*q, out);
  } else if (method == "fp8") {
    out.method = QuantMethod::Fp8;
    read_fp8(*q, out);
  } else if (method == "compressed-tensors") {
    out.method = QuantMethod::Fp8;
    read_compressed_tensors(*q, out);
  } else {
    fail(ErrorCode::Unsupported,
         "{}: field 'quant_method' is '{}'; supported: gptq, awq, fp8, compressed-tensors (float-quantized)",
         q->origin(), method);
  }
  return out;
}

QuantizationConfig load_quantization_config(const std::string& model_dir) {
  const std::filesystem::path path = std::filesystem::path(model_dir) / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_directory(model_dir, ec) || !std::filesystem::is_regular_file(path, ec)) return {};
  const nlohmann::json json = read_json_file(path.string());
  if (!json.is_object()) return {};  // HfConfig::load reports it
  return read_quantization_config(JsonFields(json, path.string()));
}

}  // namespace izwi
