// The GPTQ, AWQ and FP8 readers on small hand-built layers: the packing orders, and every hostile
// variant of a layer refused with an InvalidFormat error naming the tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "common/error_message.h"
#include "izwi/errors.h"
#include "quant/awq_reader.h"
#include "quant/dequantize.h"
#include "quant/fp8_reader.h"
#include "quant/gptq_reader.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;

constexpr int64_t kOut = 16, kIn = 64, kGroup = 32, kGroups = kIn / kGroup;
const QuantLayer kLayer{"model.safetensors", kOut, kIn};
constexpr int32_t kSevens = 0x77777777;    // eight nibbles of 7
constexpr int32_t kCounting = 0x76543210;  // nibble i holds i

QuantizationConfig int4_config(QuantMethod method) {
  QuantizationConfig c;
  c.method = method;
  c.bits = 4;
  c.group_size = kGroup;
  c.zeros_minus_one = method == QuantMethod::Gptq;
  return c;
}

// A valid symmetric GPTQ v1 layer: every q 0, every stored zero 7 (zero point 8), scales 0.5.
GptqTensors gptq_layer() {
  return {{"l.qweight", at::zeros({kIn / 8, kOut}, at::kInt)},
          {"l.qzeros", at::full({kGroups, kOut / 8}, kSevens, at::kInt)},
          {"l.scales", at::full({kGroups, kOut}, 0.5, at::kHalf)},
          {"l.g_idx", at::arange(kIn, at::kInt).div(kGroup, "floor").to(at::kInt)}};
}

AwqTensors awq_layer() {
  return {{"l.qweight", at::zeros({kIn, kOut / 8}, at::kInt)},
          {"l.qzeros", at::full({kGroups, kOut / 8}, kSevens, at::kInt)},
          {"l.scales", at::full({kGroups, kOut}, 0.5, at::kHalf)}};
}

Fp8Tensors fp8_layer() {
  return {{"l.weight", at::full({kOut, kIn}, 0x38, at::kByte)},  // 0x38 = 1.0
          {"l.weight_scale", at::full({kOut, 1}, 0.25, at::kFloat)}};
}

// The error `fn` throws must be InvalidFormat and contain `needle` (which names the tensor).
void expect_invalid(const std::function<void()>& fn, const std::string& needle) {
  EXPECT_EQ(error_code_of(fn), ErrorCode::InvalidFormat);
  const std::string message = error_message(fn);
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  EXPECT_NE(message.find("model.safetensors"), std::string::npos) << message;
}

TEST(QuantReaders, GptqUnpacksInputRowsInNibbleOrder) {
  GptqTensors t = gptq_layer();
  t.qweight.tensor[0][3] = kCounting;  // input rows 0-7 of output 3: q = 0..7
  const QuantizedMatrix m = read_gptq(kLayer, t, int4_config(QuantMethod::Gptq));
  EXPECT_EQ(m.kind, QuantKind::Int4);
  EXPECT_FALSE(m.column_order.defined());
  const at::Tensor w = dequantize(m);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(w[3][i].item<float>(), (i - 8) * 0.5f) << i;
  EXPECT_EQ(w[2][0].item<float>(), -4.0f);
}

TEST(QuantReaders, GptqActOrderKeepsTheOriginalColumnOrder) {
  GptqTensors t = gptq_layer();
  // Input column i in group (i % 2): even columns share scales[0], odd ones scales[1].
  t.g_idx.tensor = at::arange(kIn, at::kInt).remainder(2).to(at::kInt);
  t.scales.tensor[1].fill_(2.0);
  const QuantizedMatrix m = read_gptq(kLayer, t, int4_config(QuantMethod::Gptq));
  ASSERT_TRUE(m.column_order.defined());
  const at::Tensor w = dequantize(m);
  EXPECT_EQ(w[0][0].item<float>(), -4.0f);   // q 0, zero 8, scale 0.5
  EXPECT_EQ(w[0][1].item<float>(), -16.0f);  // scale 2
  EXPECT_EQ(w[5][63].item<float>(), -16.0f);
}

TEST(QuantReaders, AwqUnpacksTheInterleavedOutputColumns) {
  AwqTensors t = awq_layer();
  t.qweight.tensor[5][0] = kCounting;
  const QuantizedMatrix m = read_awq(kLayer, t, int4_config(QuantMethod::Awq));
  const at::Tensor w = dequantize(m);
  // AutoAWQ packs columns [0, 2, 4, 6, 1, 3, 5, 7] into nibbles 0-7: column c holds nibble s[c].
  const int expected[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int64_t c = 0; c < 8; ++c) EXPECT_EQ(w[c][5].item<float>(), (expected[c] - 7) * 0.5f) << c;
}

TEST(QuantReaders, Fp8PerTensorAndPerChannelScales) {
  Fp8Tensors t = fp8_layer();
  t.weight.tensor[1][2] = 0xBC;  // -1.5: sign, exponent 0111 (2^0), mantissa 100
  t.weight.tensor[1][3] = 0x01;  // the smallest subnormal, 2^-9
  EXPECT_EQ(dequantize(read_fp8(kLayer, t))[1][2].item<float>(), -1.5f * 0.25f);
  EXPECT_EQ(dequantize(read_fp8(kLayer, t))[1][3].item<float>(), std::ldexp(0.25f, -9));
  for (const auto& shape : std::vector<std::vector<int64_t>>{{}, {1}, {kOut}, {kOut, 1}}) {
    t.weight_scale.tensor = at::full(shape, 2.0, at::kBFloat16);
    EXPECT_EQ(dequantize(read_fp8(kLayer, t))[0][0].item<float>(), 2.0f);
  }
  EXPECT_EQ(e4m3_table()[0x7e].item<float>(), 448.0f);
}

// decode_e4m3 (integer ops on the bytes' device) against the format's definition, byte by byte:
// sign, 4 exponent bits with bias 7, 3 mantissa bits, subnormals at exponent 0, NaN at S.1111.111.
TEST(QuantReaders, E4m3DecodeIsTheFormatsValueOfEveryByte) {
  const at::Tensor table = e4m3_table();
  ASSERT_EQ(table.scalar_type(), at::kFloat);
  for (int b = 0; b < 256; ++b) {
    const int exponent = (b >> 3) & 15, mantissa = b & 7;
    const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa) / 8.0f, -6)
                                          : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
    const float value = table[b].item<float>();
    if (exponent == 15 && mantissa == 7) {
      EXPECT_TRUE(std::isnan(value)) << b;
    } else {
      EXPECT_EQ(value, (b & 0x80) != 0 ? -magnitude : magnitude) << b;
    }
  }
  // Any shape, decoded in place of each byte.
  const at::Tensor bytes = at::tensor({0x38, 0xb8, 0x7e, 0x01, 0x00, 0x80}, at::kByte).reshape({2, 3});
  const at::Tensor decoded = decode_e4m3(bytes);
  EXPECT_EQ(decoded.sizes(), bytes.sizes());
  EXPECT_TRUE(at::equal(decoded.reshape(-1), at::tensor({1.0f, -1.0f, 448.0f, std::ldexp(1.0f, -9), 0.0f, -0.0f})));
}

TEST(QuantReaders, GptqHostileLayersNameTheTensor) {
  const QuantizationConfig config = int4_config(QuantMethod::Gptq);
  const auto read = [&](const std::function<void(GptqTensors&, QuantizationConfig&)>& spoil) {
    return [=] {
      GptqTensors t = gptq_layer();
      QuantizationConfig c = config;
      spoil(t, c);
      read_gptq(kLayer, t, c);
    };
  };
  expect_invalid(read([](auto& t, auto&) {
                   t.scales.tensor = at::ones({kGroups, kOut / 2}, at::kHalf);
                 }),
                 "tensor 'l.scales' has shape [2, 8]");
  expect_invalid(read([](auto&, auto& c) { c.group_size = 48; }),
                 "tensor 'l.qweight': group_size 48 does not divide the layer's 64 input columns");
  expect_invalid(read([](auto& t, auto&) { t.qzeros.tensor[1][1] = 0x7777777F; }),
                 "tensor 'l.qzeros' holds a stored zero point 15");
  expect_invalid(read([](auto& t, auto&) {
                   t.qzeros.tensor = at::zeros({kGroups, 1}, at::kInt);
                 }),
                 "tensor 'l.qzeros' has shape [2, 1]");
  expect_invalid(read([](auto& t, auto&) { t.g_idx.tensor[0] = 5; }), "tensor 'l.g_idx' holds group 5");
  expect_invalid(read([](auto& t, auto&) { t.g_idx.tensor.zero_(); }), "tensor 'l.g_idx' is not a valid group map");
  expect_invalid(read([](auto& t, auto&) { t.scales.tensor[0][0] = std::numeric_limits<float>::quiet_NaN(); }),
                 "tensor 'l.scales' holds 1 non-finite scale(s)");
  expect_invalid(read([](auto& t, auto&) { t.scales.tensor[1][4] = std::numeric_limits<float>::infinity(); }),
                 "tensor 'l.scales' holds 1 non-finite scale(s)");
  expect_invalid(read([](auto& t, auto&) {
                   t.scales.tensor = at::full({kGroups, kOut}, 3e37f, at::kFloat);
                 }),
                 "tensor 'l.scales' holds the scale 3e+37, whose weights (up to 15 times it) overflow float32");
  expect_invalid(read([](auto& t, auto&) { t.qzeros.tensor = at::Tensor(); }), "required tensor 'l.qzeros' is missing");
  expect_invalid(read([](auto& t, auto& c) {
                   t.g_idx.tensor = at::Tensor();
                   c.desc_act = true;
                 }),
                 "required tensor 'l.g_idx' is missing");
  expect_invalid(read([](auto& t, auto&) { t.qweight.tensor = t.qweight.tensor.to(at::kHalf); }),
                 "tensor 'l.qweight' has dtype Half");
  // A v2 checkpoint stores the zero point itself: 15 is valid there.
  GptqTensors v2 = gptq_layer();
  v2.qzeros.tensor.fill_(-1);  // every nibble 15
  QuantizationConfig c2 = config;
  c2.zeros_minus_one = false;
  EXPECT_EQ(dequantize(read_gptq(kLayer, v2, c2))[0][0].item<float>(), -7.5f);
}

TEST(QuantReaders, AwqHostileLayersNameTheTensor) {
  const QuantizationConfig config = int4_config(QuantMethod::Awq);
  const auto read = [&](const std::function<void(AwqTensors&, QuantizationConfig&)>& spoil) {
    return [=] {
      AwqTensors t = awq_layer();
      QuantizationConfig c = config;
      spoil(t, c);
      read_awq(kLayer, t, c);
    };
  };
  expect_invalid(read([](auto& t, auto&) {
                   t.scales.tensor = at::ones({1, kOut}, at::kHalf);
                 }),
                 "tensor 'l.scales' has shape [1, 16]");
  expect_invalid(read([](auto&, auto& c) { c.group_size = 40; }), "tensor 'l.qweight': group_size 40 does not divide");
  expect_invalid(read([](auto& t, auto&) {
                   t.qweight.tensor = at::zeros({kIn / 8, kOut}, at::kInt);
                 }),
                 "tensor 'l.qweight' has shape [8, 16]");  // GPTQ's layout under an AWQ config
  expect_invalid(read([](auto& t, auto&) {
                   t.qzeros.tensor = at::zeros({kGroups + 1, kOut / 8}, at::kInt);
                 }),
                 "tensor 'l.qzeros' has shape [3, 2]");
  expect_invalid(read([](auto& t, auto&) { t.scales.tensor[0][0] = std::numeric_limits<float>::quiet_NaN(); }),
                 "tensor 'l.scales' holds 1 non-finite scale(s)");
  expect_invalid(read([](auto& t, auto&) { t.scales.tensor = t.scales.tensor.to(at::kInt); }),
                 "tensor 'l.scales' has dtype Int, expected floating-point scales");
  expect_invalid(read([](auto& t, auto&) { t.qweight.tensor = at::Tensor(); }),
                 "required tensor 'l.qweight' is missing");
}

TEST(QuantReaders, Fp8HostileLayersNameTheTensor) {
  const auto read = [](const std::function<void(Fp8Tensors&)>& spoil) {
    return [=] {
      Fp8Tensors t = fp8_layer();
      spoil(t);
      read_fp8(kLayer, t);
    };
  };
  expect_invalid(read([](auto& t) { t.weight_scale.tensor = at::ones({3}, at::kFloat); }),
                 "tensor 'l.weight_scale' has shape [3]");
  expect_invalid(read([](auto& t) {
                   t.weight_scale.tensor = at::ones({kOut / 8, kIn / 8}, at::kFloat);
                 }),
                 "tensor 'l.weight_scale' has shape [2, 8]");  // block-wise scales
  expect_invalid(read([](auto& t) { t.weight_scale.tensor[3][0] = std::numeric_limits<float>::quiet_NaN(); }),
                 "tensor 'l.weight_scale' holds 1 non-finite scale(s)");
  expect_invalid(read([](auto& t) { t.weight.tensor[0][9] = 0xFF; }), "tensor 'l.weight' holds 1 NaN weight(s)");
  expect_invalid(read([](auto& t) { t.weight_scale.tensor[2][0] = 1e37f; }),
                 "tensor 'l.weight_scale' holds the scale 1e+37, whose weights (up to 448 times it) overflow float32");
  expect_invalid(read([](auto& t) {
                   t.weight.tensor = at::ones({kOut, kIn}, at::kHalf);
                 }),
                 "tensor 'l.weight' has dtype Half");
  expect_invalid(read([](auto& t) { t.weight_scale.tensor = at::Tensor(); }),
                 "required tensor 'l.weight_scale' is missing");
}

}  // namespace
}  // namespace izwi
