#pragma once
// Reading Hugging Face config.json files: the whole document plus the fields shared by
// architectures (rope settings in both the transformers-5 and the legacy style, token ids).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
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

/// Upper bounds on model sizes, checked before anything is allocated from them. Each is well above
/// every released checkpoint (Llama 3.1 405B: 126 layers, hidden 16384, 128 heads, intermediate
/// 53248, vocab 128256, 131072 positions) and small enough that no product of them overflows int64.
constexpr int64_t kMaxLayers = 1024;                 ///< num_hidden_layers
constexpr int64_t kMaxHiddenSize = 65536;            ///< hidden_size
constexpr int64_t kMaxIntermediateSize = 1 << 20;    ///< intermediate_size
constexpr int64_t kMaxHeads = 1024;                  ///< num_attention_heads, num_key_value_heads
constexpr int64_t kMaxHeadDim = 4096;                ///< head_dim
constexpr int64_t kMaxVocabSize = int64_t{1} << 24;  ///< vocab_size
constexpr int64_t kMaxPositions = int64_t{1} << 24;  ///< max_position_embeddings (RoPE tables are sized by it)
constexpr int64_t kMaxConvKernel = 64;               ///< conv_L_cache (LFM2)
constexpr int64_t kMaxMelBins = 1024;                ///< num_mel_bins (audio encoders)
constexpr int64_t kMaxCodebooks = 64;                ///< num_code_groups, num_quantizers (audio codecs: 8-32)
constexpr int64_t kMaxUpsampleRate = 64;             ///< one codec upsampling stage

/// A config field and the range [lo, hi] its value must lie in.
struct FieldRange {
  const char* name;
  int64_t value;
  int64_t lo;
  int64_t hi;
};

/// Throws InvalidFormat naming `origin` and the first field outside its range.
void require_in_range(const std::string& origin, std::initializer_list<FieldRange> fields);

/// Upper bounds on real-valued settings: each far above every released checkpoint's value and low
/// enough that the arithmetic built on it stays finite (an epsilon of 1e30 turns every norm into 0).
constexpr double kMaxNormEps = 0.1;        ///< rms_norm_eps, norm_eps (released: 1e-12 to 1e-5)
constexpr double kMaxRopeTheta = 1e12;     ///< rope_theta (released: 1e4 to 1e9)
constexpr double kMaxRopeFactor = 1024.0;  ///< rope factor, low/high_freq_factor (released: 1 to 64)

/// A real-valued config field and the range its value must lie in: [lo, hi], or (lo, hi] when
/// `above_lo` (scales that must be positive). NaN lies in no range.
struct RealFieldRange {
  const char* name;
  double value;
  double lo;
  double hi;
  bool above_lo = false;
};

/// Throws InvalidFormat naming `origin` and the first field outside its range.
void require_real_in_range(const std::string& origin, std::initializer_list<RealFieldRange> fields);

/// A token id field that may be an integer, a list of integers or null.
std::vector<int32_t> read_token_ids(const JsonFields& config, const std::string& key);

}  // namespace izwi
