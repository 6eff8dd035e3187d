// config.json's quantization_config: the supported variants read, every other one refused with an
// error naming the field and its value.
#include <gtest/gtest.h>

#include "common/error_message.h"
#include "izwi/errors.h"
#include "quant/quantization_config.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;

QuantizationConfig parse(const std::string& quantization_config) {
  const nlohmann::json json =
      nlohmann::json::parse(R"({"model_type": "llama", "quantization_config": )" + quantization_config + "}");
  return read_quantization_config(JsonFields(json, "config.json"));
}

// The error parse() throws: its code, and a message that must name `field` and `value`.
void expect_refused(const std::string& config, ErrorCode code, const std::string& field, const std::string& value) {
  const std::function<void()> fn = [&] { parse(config); };
  EXPECT_EQ(error_code_of(fn), code) << config;
  const std::string message = error_message(fn);
  EXPECT_NE(message.find("field '" + field + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(value), std::string::npos) << message;
}

TEST(QuantConfig, AbsentMeansAFloatCheckpoint) {
  const nlohmann::json json = nlohmann::json::parse(R"({"model_type": "llama"})");
  EXPECT_EQ(read_quantization_config(JsonFields(json, "config.json")).method, QuantMethod::None);
}

TEST(QuantConfig, ReadsGptq) {
  const QuantizationConfig v1 =
      parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true, "sym": false})");
  EXPECT_EQ(v1.method, QuantMethod::Gptq);
  EXPECT_EQ(v1.bits, 4);
  EXPECT_EQ(v1.group_size, 128);
  EXPECT_TRUE(v1.desc_act);
  EXPECT_FALSE(v1.sym);
  EXPECT_TRUE(v1.zeros_minus_one);  // checkpoint_format defaults to gptq (v1)
  const QuantizationConfig v2 =
      parse(R"({"quant_method": "gptq", "bits": 4, "group_size": -1, "checkpoint_format": "gptq_v2"})");
  EXPECT_FALSE(v2.zeros_minus_one);
  EXPECT_EQ(v2.group_size, -1);
  EXPECT_FALSE(v2.desc_act);
  EXPECT_TRUE(parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 32, "format": "gptq"})").zeros_minus_one);
}

TEST(QuantConfig, RefusesGptqVariantsNamingTheField) {
  expect_refused(R"({"quant_method": "gptq", "bits": 8, "group_size": 128})", ErrorCode::Unsupported, "bits", "8");
  expect_refused(R"({"quant_method": "gptq", "bits": 5, "group_size": 128})", ErrorCode::InvalidFormat, "bits", "5");
  expect_refused(R"({"quant_method": "gptq", "bits": 4, "group_size": 256})", ErrorCode::Unsupported, "group_size",
                 "256");
  expect_refused(R"({"quant_method": "gptq", "bits": 4, "group_size": 0})", ErrorCode::InvalidFormat, "group_size",
                 "0");
  expect_refused(R"({"quant_method": "gptq", "bits": 4, "group_size": 128, "checkpoint_format": "marlin"})",
                 ErrorCode::Unsupported, "checkpoint_format", "marlin");
  expect_refused(R"({"quant_method": "gptq", "group_size": 128})", ErrorCode::InvalidFormat, "bits", "missing");
}

TEST(QuantConfig, ReadsAwqGemmAndRefusesOtherVersions) {
  const QuantizationConfig awq =
      parse(R"({"quant_method": "awq", "bits": 4, "group_size": 64, "version": "GEMM", "zero_point": true})");
  EXPECT_EQ(awq.method, QuantMethod::Awq);
  EXPECT_EQ(awq.group_size, 64);
  EXPECT_EQ(parse(R"({"quant_method": "awq", "w_bit": 4, "q_group_size": 128})").group_size, 128);
  for (const char* version : {"gemv", "gemv_fast", "marlin", "exllama", "ipex"}) {
    expect_refused(
        std::string(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "version": ")") + version + "\"}",
        ErrorCode::Unsupported, "version", version);
  }
  expect_refused(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": false})",
                 ErrorCode::Unsupported, "zero_point", "false");
  expect_refused(R"({"quant_method": "awq", "bits": 3, "group_size": 128})", ErrorCode::Unsupported, "bits", "3");
}

TEST(QuantConfig, ReadsFp8PerTensorOrChannelAndRefusesBlockWise) {
  const QuantizationConfig fp8 = parse(R"({"quant_method": "fp8", "activation_scheme": "static"})");
  EXPECT_EQ(fp8.method, QuantMethod::Fp8);
  EXPECT_TRUE(fp8.static_activations);
  EXPECT_FALSE(parse(R"({"quant_method": "fp8", "activation_scheme": "dynamic"})").static_activations);
  expect_refused(R"({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]})",
                 ErrorCode::Unsupported, "weight_block_size", "[128,128]");
  expect_refused(R"({"quant_method": "fp8", "activation_scheme": "sometimes"})", ErrorCode::InvalidFormat,
                 "activation_scheme", "sometimes");
  expect_refused(R"({"quant_method": "fp8", "fmt": "e5m2"})", ErrorCode::Unsupported, "fmt", "e5m2");
}

std::string compressed_tensors(const std::string& format, const std::string& weights,
                               const std::string& inputs = "null") {
  return R"({"quant_method": "compressed-tensors", "format": ")" + format +
         R"(", "config_groups": {"group_0": {"targets": ["Linear"], "weights": )" + weights +
         R"(, "input_activations": )" + inputs + "}}}";
}

TEST(QuantConfig, ReadsCompressedTensorsFloatQuantized) {
  const std::string channel = R"({"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": true})";
  const QuantizationConfig ct = parse(compressed_tensors("float-quantized", channel));
  EXPECT_EQ(ct.method, QuantMethod::Fp8);
  EXPECT_FALSE(ct.static_activations);
  EXPECT_TRUE(
      parse(compressed_tensors("float-quantized", channel, R"({"num_bits": 8, "type": "float", "dynamic": false})"))
          .static_activations);
  expect_refused(compressed_tensors("pack-quantized", channel), ErrorCode::Unsupported, "format", "pack-quantized");
  expect_refused(compressed_tensors("float-quantized",
                                    R"({"num_bits": 8, "type": "float", "strategy": "block", "symmetric": true})"),
                 ErrorCode::Unsupported, "strategy", "block");
  const std::string int4 = error_message(
      [&] { parse(compressed_tensors("float-quantized", R"({"num_bits": 4, "type": "int", "strategy": "group"})")); });
  EXPECT_NE(int4.find("type 'int' with num_bits 4"), std::string::npos) << int4;
}

TEST(QuantConfig, RefusesOtherMethodsNamingThem) {
  expect_refused(R"({"quant_method": "bitsandbytes", "load_in_4bit": true})", ErrorCode::Unsupported, "quant_method",
                 "bitsandbytes");
  expect_refused(R"({"bits": 4})", ErrorCode::InvalidFormat, "quant_method", "missing");
}

}  // namespace
}  // namespace izwi
