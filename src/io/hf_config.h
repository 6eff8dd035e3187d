#pragma once
// Reading Hugging Face config.json files: the whole document plus the fields shared by
// architectures (rope settings in both the transformers-5 and the legacy style, token ids).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "common/json_fields.h"

namespace izwi {

/// A parsed config.json; `fields()` gives typed access with errors naming the file.
class HfConfig {
 public:
  static HfConfig load(const std::string& model_dir);
  JsonFields fields() const { return JsonFields(json_, path_); }
  const std::string& path() const { return path_; }
  const std::string& model_dir() const { return model_dir_; }
  std::string model_type() const;

 private:
  std::string model_dir_;
  std::string path_;
  nlohmann::json json_;
};

/// Rotary embedding settings. `type` is default, linear or llama3.
struct RopeConfig {
  std::string type = "default";
  double theta = 10000.0;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 0;
};

/// Reads `rope_parameters` (transformers 5) or `rope_theta` + `rope_scaling` (hub files).
/// Unsupported rope types are reported by name.
RopeConfig read_rope_config(const JsonFields& config);

/// Throws InvalidFormat naming the first field whose value is not positive.
void require_positive(const std::string& origin, std::initializer_list<std::pair<const char*, int64_t>> fields);

/// A token id field that may be an integer, a list of integers or null.
std::vector<int32_t> read_token_ids(const JsonFields& config, const std::string& key);

}  // namespace izwi
