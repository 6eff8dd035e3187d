// The int8 / int4 kernels (kernels/cpu/quant_kernels.h) and quantize-at-load (quant/quantize.h)
// against float64 products over the dequantized weights, with bounds derived from the
// quantization: the inputs' rounding to int8 (half a step of max |x| / 127 per element), the fp16
// rounding of int4 scales (2^-11 relative) and float32 accumulation.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/reference.h"
#include "io/weight_source.h"
#include "izwi/errors.h"
#include "kernels/backend.h"
#include "kernels/cpu/panel_kernels.h"
#include "kernels/cpu/quant_linear_cpu.h"
#include "layers/linear.h"
#include "models/model_registry.h"
#include "quant/quantize.h"

namespace izwi {
namespace {

// Written here rather than taken from quant/dequantize so the kernels are checked against an
// independent reading of QuantizedMatrix: float64 [out, in] in the inputs' column order.
at::Tensor reference_weights(const QuantizedMatrix& m) {
  at::Tensor q;
  if (m.kind == QuantKind::Int8) {
    q = m.values.to(at::kDouble);
  } else {
    const at::Tensor low = m.values.bitwise_and(0x0F), high = m.values.div(16, "floor");
    q = at::stack({low, high}, 2).view({m.out, -1}).narrow(1, 0, m.in).to(at::kDouble);
  }
  const int64_t groups = m.scales.size(1);
  const at::Tensor group_of = at::arange(m.in, at::kLong).div(m.group_size, "floor").clamp_max(groups - 1);
  at::Tensor zero = m.kind == QuantKind::Int8 ? at::zeros({m.out, groups}, at::kDouble)
                    : m.zeros.defined()       ? m.zeros.to(at::kDouble)
                                              : at::full({m.out, groups}, 8.0, at::kDouble);
  at::Tensor w = (q - zero.index_select(1, group_of)) * m.scales.to(at::kDouble).index_select(1, group_of);
  if (m.column_order.defined()) {
    at::Tensor reordered = at::zeros_like(w);
    reordered.index_copy_(1, m.column_order, w);
    w = reordered;
  }
  return w;
}

std::vector<const QuantKernels*> variants() {
  std::vector<const QuantKernels*> all;
  std::set<std::string> seen;
  for (const PanelKernels* panel : supported_panel_kernels()) {
    const QuantKernels& kernels = quant_kernels_for(*panel);
    if (seen.insert(kernels.name).second) all.push_back(&kernels);
  }
  return all;
}

// Runs every variant on m and checks each output against the float64 product within the bound.
void expect_product_within_bound(const QuantizedMatrix& m, int64_t tokens, const std::string& what) {
  const QuantLayout layout = quant_layout(m, what);
  const at::Tensor packed = pack_quantized(m, layout);
  const at::Tensor x = at::randn({tokens, m.in});
  const at::Tensor bias = at::randn({m.out});
  const at::Tensor w = reference_weights(m);
  const at::Tensor xd = x.to(at::kDouble);
  const at::Tensor expected = at::matmul(xd, w.t()) + bias.to(at::kDouble);
  // Per token: the inputs' step max |x| / 127, half of it per element at most.
  const at::Tensor half_step = xd.abs().amax(1, true) / 127.0 / 2.0;
  const at::Tensor magnitude = at::matmul(xd.abs() + half_step, w.abs().t());
  const double scale_rounding = m.kind == QuantKind::Int4 ? std::ldexp(1.0, -11) : 0.0;
  const at::Tensor bound = half_step * w.abs().sum(1).unsqueeze(0) + (scale_rounding + 1e-5) * magnitude + 1e-6;
  const int64_t* order = m.column_order.defined() ? m.column_order.data_ptr<int64_t>() : nullptr;
  for (const QuantKernels* kernels : variants()) {
    at::Tensor y = at::full({tokens, m.out}, NAN);
    linear_quantized_cpu(x.data_ptr<float>(), tokens, order, packed.data_ptr<uint8_t>(), layout, m.out,
                         bias.data_ptr<float>(), y.data_ptr<float>(), *kernels);
    const at::Tensor error = (y.to(at::kDouble) - expected).abs();
    EXPECT_TRUE((error <= bound).all().item<bool>())
        << what << " on " << kernels->name << " tokens " << tokens << ": worst excess "
        << (error - bound).max().item<double>() << ", max error " << error.max().item<double>();
    // The bound is not vacuous: it is a small share of the outputs' size.
    EXPECT_LT((bound / (magnitude + 1e-3)).max().item<double>(), 0.05) << what;
  }
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {{33, 100}, {16, 64}, {1, 8}, {47, 200}, {64, 256}, {5, 7}};

TEST(QuantKernels, Int8PerChannelMatchesReference) {
  at::manual_seed(1);
  for (auto [out, in] : kShapes) {
    const QuantizedMatrix m = quantize_int8(at::randn({out, in}) * 0.05);
    for (int64_t tokens : {1, 2, 3, 4, 5, 9}) {
      expect_product_within_bound(m, tokens, "int8 " + std::to_string(out) + "x" + std::to_string(in));
    }
  }
}

TEST(QuantKernels, Int4SymmetricGroupsMatchReference) {
  at::manual_seed(2);
  for (int64_t group : {32, 64}) {
    for (auto [out, in] : kShapes) {
      // `in` not a multiple of the group (100, 200, 7): the last group is shorter.
      const QuantizedMatrix m = quantize_int4(at::randn({out, in}) * 0.05, group);
      EXPECT_FALSE(m.zeros.defined());
      for (int64_t tokens : {1, 2, 3, 4, 5, 9}) {
        expect_product_within_bound(
            m, tokens, "int4 group " + std::to_string(group) + " " + std::to_string(out) + "x" + std::to_string(in));
      }
    }
  }
}

// GPTQ / AWQ: asymmetric zero points in [0, 15] and act-order column permutations.
TEST(QuantKernels, Int4ZeroPointsAndColumnOrderMatchReference) {
  at::manual_seed(3);
  for (auto [out, in] : std::vector<std::pair<int64_t, int64_t>>{{33, 128}, {16, 96}, {40, 256}}) {
    for (bool ordered : {false, true}) {
      QuantizedMatrix m;
      m.kind = QuantKind::Int4;
      m.out = out;
      m.in = in;
      m.group_size = 32;
      m.values = at::randint(0, 256, {out, in / 2}, at::kByte);
      m.scales = at::rand({out, in / 32}) * 0.01f + 0.001f;
      m.zeros = at::randint(0, 16, {out, in / 32}, at::kByte);
      if (ordered) m.column_order = at::randperm(in, at::kLong);
      for (int64_t tokens : {1, 3, 4, 7}) {
        expect_product_within_bound(m, tokens,
                                    std::string("int4 zeros") + (ordered ? " act-order " : " ") + std::to_string(out) +
                                        "x" + std::to_string(in));
      }
    }
  }
}

TEST(QuantKernels, QuantizeAtLoadRoundsWithinHalfAStep) {
  at::manual_seed(4);
  const at::Tensor w = at::randn({37, 100});
  w[3].zero_();  // an all-zero row keeps scale 0
  const QuantizedMatrix int8 = quantize_int8(w);
  const at::Tensor step8 = int8.scales.to(at::kDouble);
  EXPECT_TRUE(((reference_weights(int8) - w.to(at::kDouble)).abs() <= step8 / 2 + 1e-7).all().item<bool>());
  EXPECT_EQ(int8.scales[3].item<float>(), 0.0f);
  for (int64_t group : {32, 64}) {
    const QuantizedMatrix int4 = quantize_int4(w, group);
    ASSERT_EQ(int4.scales.size(1), (100 + group - 1) / group);
    const at::Tensor group_of = at::arange(100, at::kLong).div(group, "floor");
    const at::Tensor step4 = int4.scales.to(at::kDouble).index_select(1, group_of);
    EXPECT_TRUE(((reference_weights(int4) - w.to(at::kDouble)).abs() <= step4 / 2 + 1e-7).all().item<bool>());
  }
}

TEST(QuantKernels, GatheredRowsAreTheDequantizedWeights) {
  at::manual_seed(5);
  const at::Tensor ids = at::tensor({0L, 5L, 16L, 36L});
  for (int kind = 0; kind < 2; ++kind) {
    QuantizedMatrix m = kind == 0 ? quantize_int8(at::randn({37, 100})) : quantize_int4(at::randn({37, 100}), 32);
    if (kind == 1) m.column_order = at::randperm(100, at::kLong);
    const QuantLayout layout = quant_layout(m, "table");
    const at::Tensor packed = pack_quantized(m, layout);
    at::Tensor rows = at::empty({ids.numel(), 100});
    gather_quantized_rows(packed.data_ptr<uint8_t>(), layout,
                          m.column_order.defined() ? m.column_order.data_ptr<int64_t>() : nullptr,
                          ids.data_ptr<int64_t>(), ids.numel(), rows.data_ptr<float>());
    const at::Tensor expected = reference_weights(m).index_select(0, ids);
    const double tolerance = kind == 0 ? 1e-6 : std::ldexp(1.0, -11);
    EXPECT_TRUE(((rows.to(at::kDouble) - expected).abs() <= tolerance * expected.abs() + 1e-7).all().item<bool>());
  }
}

TEST(QuantKernels, MalformedMatricesAreTypedErrorsNamingTheTensor) {
  QuantizedMatrix m = quantize_int4(at::randn({16, 64}), 32);
  m.group_size = 12;  // not a multiple of int4's 8-column block
  try {
    quant_layout(m, "model.layers.0.mlp.down_proj.weight");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidFormat);
    EXPECT_NE(std::string(e.what()).find("model.layers.0.mlp.down_proj.weight"), std::string::npos) << e.what();
  }
  m = quantize_int4(at::randn({16, 64}), 32);
  m.scales[0][1] = NAN;
  EXPECT_THROW(quant_layout(m, "w"), Error);
  m = quantize_int4(at::randn({16, 64}), 32);
  m.zeros = at::full({16, 2}, 16, at::kByte);
  EXPECT_THROW(quant_layout(m, "w"), Error);
  m = quantize_int4(at::randn({16, 64}), 32);
  m.scales = at::ones({16, 3});
  EXPECT_THROW(quant_layout(m, "w"), Error);
  m = quantize_int8(at::randn({16, 64}));
  m.values[0][0] = -128;
  EXPECT_THROW(quant_layout(m, "w"), Error);
  EXPECT_THROW(WeightQuantization::parse("int4:48", "EngineConfig.weight_dtype"), Error);
  EXPECT_EQ(WeightQuantization::parse("int4:64", "f").group_size, 64);
  EXPECT_EQ(WeightQuantization::parse("int4", "f").group_size, 32);
  EXPECT_TRUE(WeightQuantization::parse("int8", "f").enabled);
  EXPECT_FALSE(WeightQuantization::parse("bfloat16", "f").enabled);
}

// Float tensors by name; `quantized` ones are handed through read_quantized, as a GPTQ / AWQ
// checkpoint reader hands them.
class MemorySource final : public WeightSource {
 public:
  MemorySource() : WeightSource(at::kFloat, at::kFloat, at::kCPU) {}
  std::map<std::string, at::Tensor> tensors;
  std::map<std::string, QuantizedMatrix> quantized;

  bool contains(const std::string& name) const override { return tensors.count(name) + quantized.count(name) > 0; }
  void skip(const std::string&) override {}
  void finish() const override {}

 protected:
  std::optional<QuantizedMatrix> read_quantized(const std::string& name, const std::vector<int64_t>&) override {
    const auto it = quantized.find(name);
    return it == quantized.end() ? std::nullopt : std::optional<QuantizedMatrix>(it->second);
  }
  at::Tensor read(const std::string& name, const std::vector<int64_t>&) override { return tensors.at(name); }
};

Backend cpu_backend(const std::string& weight_dtype) {
  BackendOptions options;
  options.weight_dtype = weight_dtype;
  options.threads = 1;
  return Backend(options);
}

// Linear::load_stacked quantizes at load for EngineConfig::weight_dtype int8 / int4: the stacked
// product is the float one within the quantization's error, from a quarter / an eighth of the bytes.
TEST(QuantKernels, LinearQuantizesAtLoad) {
  at::manual_seed(6);
  const at::Tensor a = at::randn({20, 70}) * 0.05, b = at::randn({13, 70}) * 0.05, bias = at::randn({13});
  const at::Tensor x = at::randn({3, 70});
  const at::Tensor expected = at::cat({at::linear(x, a), at::linear(x, b, bias)}, 1);
  for (const std::string dtype : {"int8", "int4", "int4:64"}) {
    const Backend backend = cpu_backend(dtype);
    MemorySource source;
    source.tensors = {{"a.weight", a}, {"b.weight", b}, {"b.bias", bias}};
    source.set_backend(backend);
    const Linear linear = Linear::load_stacked(source, {"a", "b"}, {20, 13}, 70, std::vector<bool>{false, true});
    ForwardContext ctx;
    ctx.backend = &backend;
    const at::Tensor y = linear(x, ctx);
    // Relative to the outputs' spread: int8 steps are max|w| / 127 per row, int4 max|w| / 7 per group.
    const double relative = ((y - expected).abs().max() / expected.abs().max()).item<double>();
    EXPECT_LT(relative, dtype == "int8" ? 0.02 : 0.2) << dtype;
    EXPECT_GT(relative, 0.0) << dtype << ": the weights were not quantized";
    const int64_t bits = dtype == "int8" ? 8 : 4;
    EXPECT_LT(linear.weight_bytes(), 33 * 72 * bits / 8 * 3 / 2) << dtype;
  }
}

// A checkpoint's quantized matrix (read_quantized) is packed as released: zero points and act-order.
TEST(QuantKernels, LinearTakesTheCheckpointsQuantizedMatrix) {
  at::manual_seed(7);
  QuantizedMatrix m;
  m.kind = QuantKind::Int4;
  m.out = 24;
  m.in = 64;
  m.group_size = 32;
  m.values = at::randint(0, 256, {24, 32}, at::kByte);
  m.scales = at::rand({24, 2}) * 0.01f + 0.001f;
  m.zeros = at::randint(0, 16, {24, 2}, at::kByte);
  m.column_order = at::randperm(64, at::kLong);
  const at::Tensor x = at::randn({2, 64});
  const at::Tensor expected = at::matmul(x.to(at::kDouble), reference_weights(m).t());
  for (bool kernels : {true, false}) {
    const Backend backend = kernels ? cpu_backend("auto") : Backend::reference(at::kCPU, at::kFloat);
    MemorySource source;
    source.quantized = {{"q.weight", m}};
    source.set_backend(backend);
    const Linear linear = Linear::load(source, "q", 24, 64, false);
    ForwardContext ctx;
    ctx.backend = &backend;
    const at::Tensor y = linear(x, ctx).to(at::kDouble);
    // With the kernels: the inputs' int8 rounding; without (dequantized weights): float32 rounding.
    const double tolerance = kernels ? 0.02 : 1e-5;
    EXPECT_LT(((y - expected).abs().max() / expected.abs().max()).item<double>(), tolerance) << kernels;
    if (kernels) EXPECT_LT(linear.weight_bytes(), 24 * 64);
  }
}

// EngineConfig::weight_dtype "auto" keeps a bf16 checkpoint's matrices in bf16 for the CPU
// kernels (no silent float32 widening); "float32" still widens; int8 / int4 read fewer bytes again.
TEST(QuantKernels, ResidentWeightBytesFollowTheWeightDtype) {
  const std::string dir = testing::fixture_dir("llama-tiny-bf16-sharded");
  const auto bytes = [&](const std::string& weight_dtype) {
    BackendOptions options;
    options.weight_dtype = weight_dtype;
    options.threads = 1;
    return load_causal_lm(dir, std::make_shared<const Backend>(options))->spec().decode_weight_bytes;
  };
  const int64_t widened = bytes("float32"), kept = bytes("auto");
  EXPECT_EQ(kept * 2, widened);
  EXPECT_EQ(bytes("bfloat16"), kept);
  const int64_t int8 = bytes("int8"), int4 = bytes("int4");
  EXPECT_LT(int8, kept * 6 / 10);
  EXPECT_LT(int4, int8 * 7 / 10);
}

// Every family's linear layers go through the quantized path: the Qwen3-TTS talker and code
// predictor, LFM2-Audio's backbone and depthformer, Voxtral's decoder read 3-4x / 5-7x fewer bytes
// per decode step than in float32.
TEST(QuantKernels, EveryFamilyLoadsQuantized) {
  for (const char* fixture :
       {"qwen3-tiny", "lfm2-tiny", "qwen3-tts-tiny", "lfm2-audio-tiny", "voxtral-realtime-tiny"}) {
    const auto bytes = [&](const std::string& weight_dtype) {
      BackendOptions options;
      options.weight_dtype = weight_dtype;
      options.threads = 1;
      return load_causal_lm(testing::fixture_dir(fixture), std::make_shared<const Backend>(options))
          ->spec()
          .decode_weight_bytes;
    };
    const int64_t f32 = bytes("float32"), int8 = bytes("int8"), int4 = bytes("int4");
    std::printf("%s: decode weight bytes float32 %ld, int8 %ld, int4 %ld\n", fixture, static_cast<long>(f32),
                static_cast<long>(int8), static_cast<long>(int4));
    EXPECT_LT(int8, f32 * 4 / 10) << fixture;
    EXPECT_LT(int4, int8 * 7 / 10) << fixture;
  }
}

}  // namespace
}  // namespace izwi
