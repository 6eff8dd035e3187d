#include "io/hf_config.h"

#include <cstdint>
#include <filesystem>

#include "io/config_fields.h"

namespace izwi {

HfConfig HfConfig::load(const std::string& model_dir) {
  HfConfig config;
  config.model_dir_ = model_dir;
  config.path_ = (std::filesystem::path(model_dir) / "config.json").string();
  std::error_code ec;
  if (std::filesystem::is_regular_file(model_dir, ec)) {
    fail(ErrorCode::InvalidArgument, "model folder '{}' is a file; give the model's folder", model_dir);
  }
  if (!std::filesystem::is_directory(model_dir, ec)) {
    fail(ErrorCode::NotFound, "model folder '{}' does not exist", model_dir);
  }
  if (!std::filesystem::exists(config.path_, ec)) {
    fail(ErrorCode::NotFound, "model folder '{}' has no config.json: not a model folder", model_dir);
  }
  config.json_ = read_json_file(config.path_);
  if (!config.json_.is_object()) fail(ErrorCode::InvalidFormat, "{}: expected a JSON object", config.path_);
  return config;
}

std::string HfConfig::model_type() const {
  const JsonFields f = fields();
  // liquid-audio's LFM2-Audio config has no model_type: its sections name the layout.
  if (!f.has("model_type") && f.object("lfm") && f.object("depthformer")) return "lfm2_audio";
  return f.get<std::string>("model_type");
}

namespace {

// The llama3 scaling divides by all three factors: zero or a negative value bends every frequency.
constexpr ConfigField<RopeConfig> kLlama3RopeFields[] = {
    {"factor", &RopeConfig::factor, 0, kMaxRopeFactor, kRequired, true},
    {"low_freq_factor", &RopeConfig::low_freq_factor, 0, kMaxRopeFactor, kRequired, true},
    {"high_freq_factor", &RopeConfig::high_freq_factor, 0, kMaxRopeFactor, kRequired, true},
    {"original_max_position_embeddings", &RopeConfig::original_max_positions, 1, kMaxPositions, kRequired},
};
constexpr ConfigField<RopeConfig> kLinearRopeFields[] = {
    {"factor", &RopeConfig::factor, 0, kMaxRopeFactor, kRequired, true},
};

}  // namespace

RopeConfig read_rope_config(const JsonFields& config) {
  RopeConfig rope;
  // transformers 5 puts everything under rope_parameters; hub files use rope_theta + rope_scaling.
  std::optional<JsonFields> params = config.object("rope_parameters");
  if (!params) params = config.object("rope_scaling");
  rope.theta = config.get_or<double>("rope_theta", rope.theta);
  if (params) {
    rope.theta = params->get_or<double>("rope_theta", rope.theta);
    rope.type = params->get_or<std::string>("rope_type", params->get_or<std::string>("type", "default"));
    if (rope.type == "llama3") {
      read_checked_fields(*params, kLlama3RopeFields, rope);
      if (rope.high_freq_factor <= rope.low_freq_factor) {
        fail(ErrorCode::InvalidFormat, "{}: high_freq_factor must exceed low_freq_factor", params->origin());
      }
    } else if (rope.type == "linear") {
      read_checked_fields(*params, kLinearRopeFields, rope);
    } else if (rope.type != "default") {
      fail(ErrorCode::Unsupported, "{}: rope_type '{}' is not supported (default, linear, llama3)", params->origin(),
           rope.type);
    }
  }
  require_real_in_range(config.origin(), {{"rope_theta", rope.theta, 0, kMaxRopeTheta, true}});
  return rope;
}

namespace {

// A token id as stored in the file; ids outside [0, 2^31) would wrap to small, valid-looking ids.
int32_t token_id(const nlohmann::json& v, const JsonFields& config, const std::string& key) {
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t{INT32_MAX}
                                           : v.get<int64_t>() >= 0 && v.get<int64_t>() <= INT32_MAX;
  if (!fits) {
    fail(ErrorCode::InvalidFormat, "{}: field '{}' holds token id {}, outside [0, {}]", config.origin(), key, v.dump(),
         INT32_MAX);
  }
  return static_cast<int32_t>(v.get<int64_t>());
}

}  // namespace

void require_in_range(const std::string& origin, std::initializer_list<FieldRange> fields) {
  for (const FieldRange& f : fields) {
    if (f.value < f.lo || f.value > f.hi) {
      fail(ErrorCode::InvalidFormat, "{}: field '{}' is {}, it must be at least {} and at most {}", origin, f.name,
           f.value, f.lo, f.hi);
    }
  }
}

void require_real_in_range(const std::string& origin, std::initializer_list<RealFieldRange> fields) {
  for (const RealFieldRange& f : fields) {
    const bool above = f.above_lo ? f.value > f.lo : f.value >= f.lo;  // false for NaN
    if (!above || !(f.value <= f.hi)) {
      fail(ErrorCode::InvalidFormat, "{}: field '{}' is {}, it must be {} {} and at most {}", origin, f.name, f.value,
           f.above_lo ? "above" : "at least", f.lo, f.hi);
    }
  }
}

std::vector<int32_t> read_token_ids(const JsonFields& config, const std::string& key) {
  if (!config.has(key)) return {};
  const nlohmann::json& value = config.json().at(key);
  if (value.is_number_integer()) return {token_id(value, config, key)};
  if (value.is_array()) {
    std::vector<int32_t> ids;
    for (const auto& v : value) {
      if (!v.is_number_integer())
        fail(ErrorCode::InvalidFormat, "{}: field '{}' must hold integers", config.origin(), key);
      ids.push_back(token_id(v, config, key));
    }
    return ids;
  }
  fail(ErrorCode::InvalidFormat, "{}: field '{}' must be an integer or a list of integers", config.origin(), key);
}

}  // namespace izwi
