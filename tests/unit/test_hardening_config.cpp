// Config values that do not fit: token ids beyond int32, integers wider than their field, engine
// sizes without an upper bound, model sizes that would allocate before failing, real values
// (epsilons, rope settings, sampling defaults) outside a plausible range.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "audio/nemo_log_mel.h"
#include "codec/codec_decoder.h"
#include "codec/mimi_config.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "io/generation_defaults.h"
#include "io/hf_config.h"
#include "izwi/config.h"
#include "izwi/engine.h"
#include "izwi/errors.h"
#include "kernels/backend.h"
#include "models/lfm2.h"
#include "models/llama.h"
#include "models/qwen3_tts/qwen3_tts_config.h"

namespace izwi {
namespace {

using testing::error_code_of;
using testing::error_message;
using testing::TempDir;

void expect_error(const std::function<void()>& fn, ErrorCode code, const std::vector<std::string>& parts) {
  const std::string message = error_message(fn);
  EXPECT_EQ(error_code_of(fn), code) << message;
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
}

// ---- token ids ----------------------------------------------------------------------------

TEST(HardeningTokenIds, IdsOutsideInt32AreInvalidFormat) {
  for (const char* doc :
       {R"({"eos_token_id": 4294967299})", R"({"eos_token_id": [2, 4294967299]})", R"({"eos_token_id": -1})",
        R"({"eos_token_id": 2147483648})", R"({"eos_token_id": 18446744073709551615})"}) {
    const nlohmann::json j = nlohmann::json::parse(doc);
    const JsonFields f(j, "config.json");
    expect_error([&] { read_token_ids(f, "eos_token_id"); }, ErrorCode::InvalidFormat, {"config.json", "eos_token_id"});
  }
  const nlohmann::json ok = nlohmann::json::parse(R"({"eos_token_id": [0, 2147483647]})");
  EXPECT_EQ(read_token_ids(JsonFields(ok, "cfg"), "eos_token_id"), (std::vector<int32_t>{0, 2147483647}));
}

// ---- integer narrowing ----------------------------------------------------------------------

// A kernel variant name is checked when the config is, and one this CPU cannot run when the engine
// loads; both errors name the field and the accepted values.
TEST(HardeningEngineConfig, CpuKernelsNamesTheVariantsThisCpuRuns) {
  EngineConfig unknown;
  unknown.cpu_kernels = "sse";
  EXPECT_EQ(error_code_of([&] { unknown.validate(); }), ErrorCode::InvalidArgument);
  EXPECT_NE(error_message([&] { unknown.validate(); }).find("cpu_kernels"), std::string::npos);
  EngineConfig portable;
  portable.cpu_kernels = "portable";
  portable.validate();
  Engine engine(testing::fixture_dir("llama-tiny"), portable);
  Request r;
  r.prompt_ids = {1, 17, 42};
  r.params.max_tokens = 3;
  r.params.ignore_eos = true;
  EXPECT_EQ(engine.generate(r).tokens.size(), 3u);
}

TEST(HardeningEngineConfig, KvCacheDtypeIsChecked) {
  EngineConfig bad;
  bad.kv_cache_dtype = "float16";
  expect_error([&] { bad.validate(); }, ErrorCode::InvalidArgument, {"kv_cache_dtype", "auto, float32 or bfloat16"});
  const EngineConfig parsed = EngineConfig::from_json_string(R"({"kv_cache_dtype": "bfloat16"})", "engine.json");
  EXPECT_EQ(parsed.kv_cache_dtype, "bfloat16");
  expect_error([] { EngineConfig::from_json_string(R"({"kv_cache_dtype": "int8"})", "engine.json"); },
               ErrorCode::InvalidArgument, {"kv_cache_dtype"});
}

TEST(HardeningEngineConfig, KvCacheMemoryFractionIsChecked) {
  for (const double bad : {-0.1, 0.99, std::nan("")}) {
    EngineConfig config;
    config.kv_cache_memory_fraction = bad;
    expect_error([&] { config.validate(); }, ErrorCode::InvalidArgument, {"kv_cache_memory_fraction", "[0, 0.98]"});
  }
  EXPECT_EQ(
      EngineConfig::from_json_string(R"({"kv_cache_memory_fraction": 0.5})", "engine.json").kv_cache_memory_fraction,
      0.5);
  expect_error([] { EngineConfig::from_json_string(R"({"kv_cache_memory_fraction": "half"})", "engine.json"); },
               ErrorCode::InvalidFormat, {"engine.json", "kv_cache_memory_fraction"});
}

TEST(HardeningEngineConfig, UseCudaGraphsIsABoolean) {
  EXPECT_TRUE(EngineConfig{}.use_cuda_graphs);
  EXPECT_FALSE(EngineConfig::from_json_string(R"({"use_cuda_graphs": false})", "engine.json").use_cuda_graphs);
  expect_error([] { EngineConfig::from_json_string(R"({"use_cuda_graphs": 1})", "engine.json"); },
               ErrorCode::InvalidFormat, {"engine.json", "use_cuda_graphs"});
}

TEST(HardeningEngineConfig, RetainFreedMemoryIsABoolean) {
  EXPECT_TRUE(EngineConfig{}.retain_freed_memory);
  EXPECT_FALSE(EngineConfig::from_json_string(R"({"retain_freed_memory": false})", "engine.json").retain_freed_memory);
  expect_error([] { EngineConfig::from_json_string(R"({"retain_freed_memory": "yes"})", "engine.json"); },
               ErrorCode::InvalidFormat, {"engine.json", "retain_freed_memory"});
}

TEST(HardeningEngineConfig, IntegerThatDoesNotFitIsInvalidFormat) {
  expect_error([] { EngineConfig::from_json_string(R"({"max_batch_size": 4294967297})", "engine.json"); },
               ErrorCode::InvalidFormat, {"engine.json", "max_batch_size", "4294967297"});
  expect_error([] { EngineConfig::from_json_string(R"({"num_threads": -4294967296})", "engine.json"); },
               ErrorCode::InvalidFormat, {"num_threads"});
  expect_error([] { EngineConfig::from_json_string(R"({"block_size": 18446744073709551615})", "engine.json"); },
               ErrorCode::InvalidFormat, {"block_size"});
  // The generic accessor: unsigned fields reject negatives, narrow fields reject wide values.
  const nlohmann::json j = nlohmann::json::parse(R"({"neg": -1, "big": 300, "ok": 7})");
  const JsonFields f(j, "f.json");
  expect_error([&] { f.get<uint32_t>("neg"); }, ErrorCode::InvalidFormat, {"f.json", "'neg'"});
  expect_error([&] { f.get<int8_t>("big"); }, ErrorCode::InvalidFormat, {"'big'"});
  EXPECT_EQ(f.get<uint8_t>("ok"), 7);
  EXPECT_EQ(f.get<int64_t>("neg"), -1);
}

// ---- EngineConfig upper bounds ----------------------------------------------------------------

TEST(HardeningEngineConfig, SizeFieldsHaveUpperBounds) {
  auto expect_field = [](const std::function<void(EngineConfig&)>& set, const std::string& field,
                         const std::string& bound) {
    EngineConfig c;
    set(c);
    expect_error([&] { c.validate(); }, ErrorCode::InvalidArgument, {"EngineConfig." + field, bound});
  };
  expect_field([](EngineConfig& c) { c.num_threads = 100000; }, "num_threads", "1024");
  expect_field(
      [](EngineConfig& c) {
        c.max_batch_size = 5000;
        c.max_tokens_per_step = 8192;
      },
      "max_batch_size", "4096");
  expect_field([](EngineConfig& c) { c.max_tokens_per_step = 2000000; }, "max_tokens_per_step", "1048576");
  expect_field([](EngineConfig& c) { c.max_seq_len = 20000000; }, "max_seq_len", "16777216");
  expect_field([](EngineConfig& c) { c.block_size = 5000; }, "block_size", "1024");
  expect_field([](EngineConfig& c) { c.num_kv_blocks = 2000000000; }, "num_kv_blocks", "2147483647");
  expect_error([] { EngineConfig::from_json_string(R"({"num_threads": 100000})", "engine.json"); },
               ErrorCode::InvalidArgument, {"num_threads"});
  EngineConfig at_limits;
  at_limits.num_threads = 1024;
  at_limits.max_batch_size = 4096;
  at_limits.max_tokens_per_step = 1 << 20;
  at_limits.max_seq_len = 1 << 24;
  at_limits.block_size = 1024;
  at_limits.num_kv_blocks = (1 << 21) - 1;
  EXPECT_NO_THROW(at_limits.validate());
}

// ---- model config bounds ----------------------------------------------------------------------

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string write_config(const TempDir& dir, const nlohmann::json& config) {
  dir.write("config.json", config.dump());
  return dir.path();
}

const std::string kData = IZWI_TEST_DATA_DIR;

TEST(HardeningModelConfig, LlamaSizesHaveUpperBounds) {
  const nlohmann::json base = read_json(kData + "/llama-tiny/config.json");
  EXPECT_NO_THROW(LlamaConfig::parse(HfConfig::load(kData + "/llama-tiny"), false));
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {{"max_position_embeddings", int64_t{1} << 31},
                                                                     {"num_hidden_layers", 1000000000},
                                                                     {"hidden_size", 1 << 20},
                                                                     {"num_attention_heads", 4096},
                                                                     {"vocab_size", int64_t{1} << 30},
                                                                     {"intermediate_size", int64_t{1} << 40},
                                                                     {"head_dim", 1 << 20},
                                                                     {"num_key_value_heads", 4096}};
  for (const auto& [field, value] : cases) {
    TempDir dir;
    nlohmann::json config = base;
    config[field] = value;
    expect_error([&] { LlamaConfig::parse(HfConfig::load(write_config(dir, config)), false); },
                 ErrorCode::InvalidFormat, {"config.json", "'" + field + "'", "at most"});
  }
}

TEST(HardeningModelConfig, NormEpsAndRopeThetaMustBeFiniteAndNonNegative) {
  const nlohmann::json base = read_json(kData + "/llama-tiny/config.json");
  auto expect_rejected = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& field) {
    TempDir dir;
    nlohmann::json config = base;
    edit(config);
    expect_error([&] { LlamaConfig::parse(HfConfig::load(write_config(dir, config)), false); },
                 ErrorCode::InvalidFormat, {"config.json", field});
  };
  expect_rejected([](nlohmann::json& c) { c["rms_norm_eps"] = -1e-5; }, "rms_norm_eps");
  expect_rejected([](nlohmann::json& c) { c["rope_parameters"]["rope_theta"] = -500000.0; }, "rope_theta");
  {  // a value beyond double range never becomes inf: the file is rejected as a whole
    TempDir dir;
    nlohmann::json config = base;
    config["rms_norm_eps"] = 12345.5;
    std::string text = config.dump();
    text.replace(text.find("12345.5"), 7, "1e400");
    dir.write("config.json", text);
    EXPECT_EQ(error_code_of([&] { HfConfig::load(dir.path()); }), ErrorCode::InvalidFormat);
  }
  TempDir dir;
  nlohmann::json config = base;
  config["rms_norm_eps"] = 0.0;  // zero is a legal (if unusual) epsilon
  EXPECT_NO_THROW(LlamaConfig::parse(HfConfig::load(write_config(dir, config)), false));
}

TEST(HardeningModelConfig, Lfm2SizesHaveUpperBounds) {
  const nlohmann::json base = read_json(kData + "/lfm2-tiny/config.json");
  EXPECT_NO_THROW(Lfm2Config::parse(HfConfig::load(kData + "/lfm2-tiny").fields()));
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"max_position_embeddings", int64_t{1} << 31}, {"vocab_size", int64_t{1} << 30}, {"conv_L_cache", 100000}}) {
    TempDir dir;
    nlohmann::json config = base;
    config[field] = value;
    expect_error([&] { Lfm2Config::parse(HfConfig::load(write_config(dir, config)).fields()); },
                 ErrorCode::InvalidFormat, {"config.json", "'" + field + "'", "at most"});
  }
  {
    TempDir dir;
    nlohmann::json config = base;
    config["norm_eps"] = -1.0;
    expect_error([&] { Lfm2Config::parse(HfConfig::load(write_config(dir, config)).fields()); },
                 ErrorCode::InvalidFormat, {"config.json", "norm_eps"});
  }
}

TEST(HardeningModelConfig, Lfm2HugeLayerCountFailsBeforeAllocating) {
  // num_hidden_layers sizes the layer_types table: it must be rejected before, not after.
  TempDir dir;
  nlohmann::json config = read_json(kData + "/lfm2-tiny/config.json");
  config["num_hidden_layers"] = int64_t{1} << 40;
  expect_error([&] { Lfm2Config::parse(HfConfig::load(write_config(dir, config)).fields()); }, ErrorCode::InvalidFormat,
               {"'num_hidden_layers'", "at most"});
}

// Voxtral's decoder and encoder settings are read when the model is built: copy the tiny model
// with an edited config (the weights by symlink) and build an engine.
void expect_voxtral_error(const std::function<void(nlohmann::json&)>& edit, const std::vector<std::string>& parts) {
  TempDir dir;
  const std::string src = kData + "/voxtral-realtime-tiny";
  nlohmann::json config = read_json(src + "/config.json");
  edit(config);
  dir.write("config.json", config.dump());
  for (const char* name : {"model.safetensors", "generation_config.json"}) {
    std::filesystem::create_symlink(src + "/" + name, dir.file(name));
  }
  expect_error([&] { Engine engine(dir.path()); }, ErrorCode::InvalidFormat, parts);
}

TEST(HardeningModelConfig, VoxtralSizesHaveUpperBounds) {
  expect_voxtral_error([](nlohmann::json& c) { c["text_config"]["num_hidden_layers"] = 1000000000; },
                       {"text_config", "'num_hidden_layers'", "at most"});
  expect_voxtral_error([](nlohmann::json& c) { c["text_config"]["max_position_embeddings"] = int64_t{1} << 31; },
                       {"text_config", "'max_position_embeddings'", "at most"});
  expect_voxtral_error([](nlohmann::json& c) { c["audio_config"]["num_hidden_layers"] = 1000000000; },
                       {"audio_config", "'num_hidden_layers'", "at most"});
  expect_voxtral_error([](nlohmann::json& c) { c["audio_config"]["num_mel_bins"] = 1 << 20; },
                       {"audio_config", "'num_mel_bins'", "at most"});
  expect_voxtral_error([](nlohmann::json& c) { c["text_config"]["rms_norm_eps"] = -1.0; },
                       {"text_config", "rms_norm_eps"});
  expect_voxtral_error([](nlohmann::json& c) { c["audio_config"]["rms_norm_eps"] = -1.0; },
                       {"audio_config", "rms_norm_eps"});
}

// Qwen3-TTS: the talker's extra sizes and the codec decoder's config are bounded like the text
// models' (a folder with only the edited config.json: parsing fails before any weight is read).
TEST(HardeningModelConfig, Qwen3TtsTalkerSizesHaveUpperBounds) {
  const nlohmann::json base = read_json(kData + "/qwen3-tts-tiny/config.json");
  EXPECT_NO_THROW(Qwen3TtsConfig::parse(HfConfig::load(kData + "/qwen3-tts-tiny")));
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"text_vocab_size", int64_t{1} << 30}, {"text_hidden_size", 1 << 20}, {"num_code_groups", 1000}};
  for (const auto& [field, value] : cases) {
    TempDir dir;
    nlohmann::json config = base;
    config["talker_config"][field] = value;
    expect_error([&] { Qwen3TtsConfig::parse(HfConfig::load(write_config(dir, config))); }, ErrorCode::InvalidFormat,
                 {"talker_config", "'" + field + "'", "at most"});
  }
}

TEST(HardeningModelConfig, CodecDecoderSizesHaveUpperBounds) {
  const nlohmann::json base = read_json(kData + "/qwen3-tts-codec-decoder-tiny/config.json");
  const nlohmann::json& decoder = base.contains("decoder_config") ? base["decoder_config"] : base;
  const auto edit = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json config = base;
    change(base.contains("decoder_config") ? config["decoder_config"] : config);
    return config;
  };
  ASSERT_TRUE(decoder.is_object());
  const std::vector<std::pair<std::string, nlohmann::json>> cases = {
      {"num_quantizers", 1000000000},      {"decoder_dim", int64_t{1} << 40},    {"num_hidden_layers", 1000000000},
      {"codebook_size", int64_t{1} << 40}, {"sliding_window", int64_t{1} << 40}, {"upsample_rates", {8, 1000000000}}};
  for (const auto& [field, value] : cases) {
    TempDir dir;
    write_config(dir, edit([&](nlohmann::json& d) { d[field] = value; }));
    expect_error([&] { load_codec_decoder(dir.path(), Backend::host()); }, ErrorCode::InvalidFormat,
                 {"config.json", "'" + field + "'", "at most"});
  }
  TempDir dir;
  write_config(dir, edit([](nlohmann::json& d) { d["rms_norm_eps"] = -1.0; }));
  expect_error([&] { load_codec_decoder(dir.path(), Backend::host()); }, ErrorCode::InvalidFormat,
               {"config.json", "rms_norm_eps"});
}

// ---- real-valued fields: one range table (RealFieldRange) for every model -------------------

// `edit` applied to a copy of `fixture`'s config.json must make `parse` fail naming the field and
// the file; the unedited config parses.
void expect_field_rejected(const std::string& fixture, const std::function<void(const HfConfig&)>& parse,
                           const std::function<void(nlohmann::json&)>& edit, const std::string& field) {
  EXPECT_NO_THROW(parse(HfConfig::load(kData + "/" + fixture))) << fixture;
  TempDir dir;
  nlohmann::json config = read_json(kData + "/" + fixture + "/config.json");
  edit(config);
  expect_error([&] { parse(HfConfig::load(write_config(dir, config))); }, ErrorCode::InvalidFormat,
               {dir.file("config.json"), "'" + field + "'"});
}

TEST(HardeningModelConfig, ImplausibleEpsilonsAreRejected) {
  const auto llama = [](const HfConfig& hf) { LlamaConfig::parse(hf, false); };
  const auto qwen3 = [](const HfConfig& hf) { LlamaConfig::parse(hf, true); };
  const auto lfm2 = [](const HfConfig& hf) { Lfm2Config::parse(hf.fields()); };
  const auto mimi = [](const HfConfig& hf) { MimiConfig::parse(hf.fields()); };
  for (const double bad : {1e30, 0.5}) {
    expect_field_rejected(
        "llama-tiny", llama, [&](nlohmann::json& c) { c["rms_norm_eps"] = bad; }, "rms_norm_eps");
    expect_field_rejected(
        "qwen3-tiny", qwen3, [&](nlohmann::json& c) { c["rms_norm_eps"] = bad; }, "rms_norm_eps");
    expect_field_rejected(
        "lfm2-tiny", lfm2, [&](nlohmann::json& c) { c["norm_eps"] = bad; }, "norm_eps");
    expect_field_rejected(
        "mimi-tiny", mimi, [&](nlohmann::json& c) { c["norm_eps"] = bad; }, "norm_eps");
  }
  const std::string message = error_message([] {
    TempDir dir;
    nlohmann::json config = read_json(kData + "/llama-tiny/config.json");
    config["rms_norm_eps"] = 1e30;
    LlamaConfig::parse(HfConfig::load(write_config(dir, config)), false);
  });
  EXPECT_NE(message.find("at most 0.1"), std::string::npos) << message;
}

TEST(HardeningModelConfig, ImplausibleRopeSettingsAreRejected) {
  const auto llama = [](const HfConfig& hf) { LlamaConfig::parse(hf, false); };
  const auto rope = [](const std::string& key, const nlohmann::json& value) {
    return [=](nlohmann::json& c) { c["rope_parameters"][key] = value; };
  };
  ASSERT_EQ(read_json(kData + "/llama-tiny/config.json")["rope_parameters"]["rope_type"], "llama3");
  expect_field_rejected("llama-tiny", llama, rope("original_max_position_embeddings", 0),
                        "original_max_position_embeddings");
  expect_field_rejected("llama-tiny", llama, rope("original_max_position_embeddings", -8192),
                        "original_max_position_embeddings");
  expect_field_rejected("llama-tiny", llama, rope("low_freq_factor", 0.0), "low_freq_factor");
  expect_field_rejected("llama-tiny", llama, rope("factor", 0.0), "factor");
  expect_field_rejected("llama-tiny", llama, rope("factor", 1e9), "factor");
  expect_field_rejected("llama-tiny", llama, rope("rope_theta", 1e30), "rope_theta");
  expect_field_rejected(
      "llama-tiny", llama,
      [](nlohmann::json& c) {
        c["rope_parameters"] = {{"rope_type", "linear"}, {"factor", -2.0}, {"rope_theta", 1e4}};
      },
      "factor");
  expect_field_rejected(
      "mimi-tiny", [](const HfConfig& hf) { MimiConfig::parse(hf.fields()); },
      [](nlohmann::json& c) { c["rope_parameters"]["rope_theta"] = 0.0; }, "rope_theta");
}

TEST(HardeningModelConfig, CodecDecoderEpsilonIsBounded) {
  TempDir dir;
  nlohmann::json config = read_json(kData + "/qwen3-tts-codec-decoder-tiny/config.json");
  (config.contains("decoder_config") ? config["decoder_config"] : config)["rms_norm_eps"] = 1e30;
  write_config(dir, config);
  expect_error([&] { load_codec_decoder(dir.path(), Backend::host()); }, ErrorCode::InvalidFormat,
               {"config.json", "'rms_norm_eps'", "at most"});
}

TEST(HardeningModelConfig, VoxtralImplausibleValuesAreRejected) {
  expect_voxtral_error([](nlohmann::json& c) { c["text_config"]["rms_norm_eps"] = 1e30; },
                       {"text_config", "'rms_norm_eps'"});
  expect_voxtral_error([](nlohmann::json& c) { c["audio_config"]["rms_norm_eps"] = 1e30; },
                       {"audio_config", "'rms_norm_eps'"});
  expect_voxtral_error([](nlohmann::json& c) { c["text_config"]["sliding_window"] = -1; },
                       {"text_config", "'sliding_window'"});
  expect_voxtral_error(
      [](nlohmann::json& c) {
        c["downsample_factor"] = 0;
        c["audio_length_per_tok"] = 0;
      },
      {"config.json", "'downsample_factor'"});
  expect_voxtral_error([](nlohmann::json& c) { c["default_num_delay_tokens"] = -3; },
                       {"config.json", "'default_num_delay_tokens'"});
}

TEST(HardeningModelConfig, NemoPreprocessorValuesAreBounded) {
  const nlohmann::json base = read_json(kData + "/lfm2-audio-tiny/config.json");
  const auto parse = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json config = base;
    edit(config["preprocessor"]);
    const JsonFields f(config, "cfg.json");
    NemoLogMelConfig::parse(*f.object("preprocessor"));
  };
  EXPECT_NO_THROW(parse([](nlohmann::json&) {}));
  for (const auto& [field, value] : std::vector<std::pair<std::string, double>>{
           {"preemph", 5.0}, {"highfreq", 1e9}, {"window_size", 1e30}, {"log_zero_guard_value", 1e30}}) {
    expect_error([&, field = field, value = value] { parse([&](nlohmann::json& p) { p[field] = value; }); },
                 ErrorCode::InvalidFormat, {"cfg.json.preprocessor", "'" + field + "'"});
  }
}

TEST(HardeningModelConfig, Qwen3TtsSamplingDefaultsAreBounded) {
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"top_p", 2.0},
                                                                                        {"subtalker_top_p", 0.0},
                                                                                        {"temperature", -1.0},
                                                                                        {"subtalker_temperature", 1e30},
                                                                                        {"repetition_penalty", 0.0},
                                                                                        {"top_k", -5}}) {
    TempDir dir;
    dir.write("generation_config.json", nlohmann::json{{field, value}}.dump());
    expect_error([&] { read_generation_defaults(dir.path(), GenerationDefaultsRule::Qwen3Tts); },
                 ErrorCode::InvalidFormat, {dir.file("generation_config.json"), "'" + field + "'"});
  }
  TempDir dir;
  dir.write("generation_config.json", R"({"top_p": 1.0, "temperature": 0.9, "repetition_penalty": 1.05, "top_k": 50})");
  EXPECT_FLOAT_EQ(*read_generation_defaults(dir.path(), GenerationDefaultsRule::Qwen3Tts).sampling.temperature, 0.9f);
}

}  // namespace
}  // namespace izwi
