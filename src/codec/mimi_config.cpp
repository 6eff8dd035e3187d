#include "codec/mimi_config.h"

#include <cmath>
#include <string>

#include "common/check.h"
#include "common/json_fields.h"
#include "io/config_fields.h"
#include "io/hf_config.h"

namespace izwi {

MimiConfig::MimiConfig() {
  WindowedTransformerConfig& t = transformer;
  t.style = WindowedTransformerConfig::Style::kMimi;
  t.input_dim = t.hidden_size = hidden_size;
  t.intermediate_size = 2048;
  t.num_layers = 8;
  t.num_heads = t.num_kv_heads = 8;
  t.head_dim = 64;
  t.sliding_window = 250;
  t.rope_theta = 10000.0;
  t.norm_eps = 1e-5;
}

int64_t MimiConfig::hop_length() const {
  int64_t total = 1;
  for (const int64_t r : upsampling_ratios) total *= r;
  return total;
}

namespace {

// Absent keys keep MimiConfig's defaults (kyutai/mimi). Bounds that depend on other fields
// (upsample_groups, num_semantic_quantizers) are checked in parse.
constexpr ConfigField<MimiConfig> kMimiFields[] = {
    {"sampling_rate", &MimiConfig::sample_rate, 1000, 768000},
    {"hidden_size", &MimiConfig::hidden_size, 1, kMaxHiddenSize},
    {"num_filters", &MimiConfig::num_filters, 1, kMaxHiddenSize},
    {"num_residual_layers", &MimiConfig::num_residual_layers, 0, 16},
    {"kernel_size", &MimiConfig::kernel_size, 1, kMaxConvKernel},
    {"last_kernel_size", &MimiConfig::last_kernel_size, 1, kMaxConvKernel},
    {"residual_kernel_size", &MimiConfig::residual_kernel_size, 1, kMaxConvKernel},
    {"dilation_growth_rate", &MimiConfig::dilation_growth_rate, 1, 16},
    {"compress", &MimiConfig::compress, 1, kMaxHiddenSize},
};
constexpr ConfigField<SplitRvqConfig> kQuantizerFields[] = {
    {"num_quantizers", &SplitRvqConfig::num_quantizers, 1, kMaxCodebooks},
    {"codebook_size", &SplitRvqConfig::codebook_size, 1, kMaxVocabSize},
    {"codebook_dim", &SplitRvqConfig::dim, 1, kMaxHiddenSize},
};
// num_key_value_heads and head_dim default to values derived from the others (set after reading).
constexpr ConfigField<WindowedTransformerConfig> kTransformerFields[] = {
    {"intermediate_size", &WindowedTransformerConfig::intermediate_size, 1, kMaxIntermediateSize},
    {"num_hidden_layers", &WindowedTransformerConfig::num_layers, 0, kMaxLayers},
    {"num_attention_heads", &WindowedTransformerConfig::num_heads, 1, kMaxHeads},
    {"num_key_value_heads", &WindowedTransformerConfig::num_kv_heads, 1, kMaxHeads},
    {"head_dim", &WindowedTransformerConfig::head_dim, 2, kMaxHeadDim},
    {"sliding_window", &WindowedTransformerConfig::sliding_window, 1, kMaxPositions},
    {"norm_eps", &WindowedTransformerConfig::norm_eps, 0, kMaxNormEps},
    {"rope_theta", &WindowedTransformerConfig::rope_theta, 0, kMaxRopeTheta, kKeep, true},
};

}  // namespace

MimiConfig MimiConfig::parse(const JsonFields& f) {
  MimiConfig c;
  const std::string& origin = f.origin();
  read_fields(f, kMimiFields, c);
  c.upsampling_ratios = f.get_or<std::vector<int64_t>>("upsampling_ratios", c.upsampling_ratios);
  c.upsample_groups = f.get_or<int64_t>("upsample_groups", c.upsample_groups);
  SplitRvqConfig& q = c.quantizer;
  read_fields(f, kQuantizerFields, q);
  q.num_semantic = f.get_or<int64_t>("num_semantic_quantizers", q.num_semantic);
  q.output_dim = c.hidden_size;
  WindowedTransformerConfig& t = c.transformer;
  t.input_dim = t.hidden_size = c.hidden_size;
  read_fields(f, kTransformerFields, t);
  if (!f.has("num_key_value_heads")) t.num_kv_heads = t.num_heads;
  if (!f.has("head_dim")) t.head_dim = c.hidden_size / std::max<int64_t>(t.num_heads, 1);
  t.attention_bias = f.get_or<bool>("attention_bias", false);
  if (const std::optional<JsonFields> rope = f.object("rope_parameters")) {
    t.rope_theta = rope->get_or<double>("rope_theta", t.rope_theta);
    const std::string type = rope->get_or<std::string>("rope_type", "default");
    if (type != "default")
      fail(ErrorCode::Unsupported, "{}: rope_type '{}' is not supported (only default)", origin, type);
  }

  check_fields(origin, kMimiFields, c);
  require_in_range(origin, {{"upsampling_ratios (stages)", static_cast<int64_t>(c.upsampling_ratios.size()), 1, 8},
                            {"upsample_groups", c.upsample_groups, 1, c.hidden_size}});
  check_fields(origin, kQuantizerFields, q);
  require_in_range(origin, {{"num_semantic_quantizers", q.num_semantic, 1, q.num_quantizers}});
  check_fields(origin, kTransformerFields, t);
  for (const int64_t r : c.upsampling_ratios) require_in_range(origin, {{"upsampling_ratios", r, 1, kMaxUpsampleRate}});
  if (t.num_heads % t.num_kv_heads != 0 || t.head_dim % 2 != 0) {
    fail(ErrorCode::InvalidFormat,
         "{}: {} heads, {} key/value heads and head_dim {} do not fit (whole groups, even head_dim)", origin,
         t.num_heads, t.num_kv_heads, t.head_dim);
  }
  if (c.hidden_size % c.upsample_groups != 0) {
    fail(ErrorCode::InvalidFormat, "{}: hidden_size {} is not a multiple of upsample_groups {}", origin, c.hidden_size,
         c.upsample_groups);
  }
  const int64_t stages = static_cast<int64_t>(c.upsampling_ratios.size());
  if ((c.num_filters << stages) / c.compress == 0 || ((c.num_filters << stages) >> stages) != c.num_filters ||
      c.num_filters < c.compress) {
    fail(ErrorCode::InvalidFormat, "{}: num_filters {} cannot be doubled {} times and divided by compress {}", origin,
         c.num_filters, stages, c.compress);
  }
  if (f.get_or<int64_t>("vector_quantization_hidden_dimension", q.dim) != q.dim) {
    fail(ErrorCode::InvalidFormat, "{}: vector_quantization_hidden_dimension must equal codebook_dim {}", origin,
         q.dim);
  }
  // The SEANet rate over the codec's frame rate: 1 (no resampling stage) or 2 (transformers'
  // down/upsample convs have stride 2 and kernel 2 * that ratio).
  const double seanet_rate = std::ceil(static_cast<double>(c.sample_rate) / static_cast<double>(c.hop_length()));
  const double frame_rate = f.has("frame_rate")    ? f.get<double>("frame_rate")
                            : f.has("_frame_rate") ? f.get<double>("_frame_rate")
                                                   : seanet_rate / 2;
  if (frame_rate == seanet_rate) {
    c.resample_stride = 1;
  } else if (frame_rate * 2 == seanet_rate) {
    c.resample_stride = 2;
  } else {
    fail(ErrorCode::Unsupported, "{}: frame rate {} Hz is neither the SEANet rate {} Hz nor half of it", origin,
         frame_rate, seanet_rate);
  }

  if (f.get_or<int32_t>("audio_channels", 1) != 1)
    fail(ErrorCode::Unsupported, "{}: only mono Mimi (audio_channels 1) is supported", origin);
  if (!f.get_or<bool>("use_causal_conv", true))
    fail(ErrorCode::Unsupported, "{}: only causal convolutions (use_causal_conv) are supported", origin);
  if (f.get_or<bool>("use_conv_shortcut", false))
    fail(ErrorCode::Unsupported, "{}: use_conv_shortcut is not supported", origin);
  if (f.get_or<double>("trim_right_ratio", 1.0) != 1.0)
    fail(ErrorCode::Unsupported, "{}: trim_right_ratio must be 1.0", origin);
  const std::string pad_mode = f.get_or<std::string>("pad_mode", "constant");
  if (pad_mode != "constant")
    fail(ErrorCode::Unsupported, "{}: pad_mode '{}' is not supported (only constant)", origin, pad_mode);
  const std::string act = f.get_or<std::string>("hidden_act", "gelu");
  if (act != "gelu") fail(ErrorCode::Unsupported, "{}: hidden_act '{}' is not supported (only gelu)", origin, act);
  return c;
}

}  // namespace izwi
