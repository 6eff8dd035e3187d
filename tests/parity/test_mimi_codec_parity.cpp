// The Mimi codec against transformers' MimiModel (fixture mimi-tiny): whole and streamed decode,
// batched streams, encode, fewer codebooks, moshi's tensor names, and typed errors.

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "bench_support/safetensors_writer.h"
#include "codec/codec_decoder.h"
#include "codec/codec_encoder.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "io/safetensors.h"
#include "io/safetensors_tensor.h"
#include "izwi/audio.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr double kTolerance = 1e-4;
const char* const kFixture = "mimi-tiny";

class MimiParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ref_ = new testing::ReferenceTensors(kFixture);
    decoder_ = load_codec_decoder(testing::fixture_dir(kFixture), testing::test_backend()).release();
    encoder_ = load_codec_encoder(testing::fixture_dir(kFixture), testing::test_backend()).release();
  }
  static void TearDownTestSuite() {
    delete encoder_;
    delete decoder_;
    delete ref_;
  }
  static at::Tensor codes() { return ref_->get("codes"); }
  static at::Tensor audio() { return ref_->get("decoded_audio").to(at::kFloat); }

  static at::Tensor streamed(const CodecDecoder& decoder, const at::Tensor& all, int64_t chunk) {
    auto state = decoder.new_state();
    std::vector<at::Tensor> pieces;
    for (int64_t f = 0; f < all.size(1); f += chunk) {
      const int64_t n = std::min(chunk, all.size(1) - f);
      const at::Tensor out = decoder.decode_streaming({state.get()}, {all.narrow(1, f, n)})[0];
      EXPECT_EQ(out.numel(), n * decoder.samples_per_frame());
      pieces.push_back(out);
    }
    return at::cat(pieces);
  }

  static testing::ReferenceTensors* ref_;
  static CodecDecoder* decoder_;
  static CodecEncoder* encoder_;
};

testing::ReferenceTensors* MimiParity::ref_ = nullptr;
CodecDecoder* MimiParity::decoder_ = nullptr;
CodecEncoder* MimiParity::encoder_ = nullptr;

TEST_F(MimiParity, DescribesTheCodec) {
  EXPECT_EQ(decoder_->num_codebooks(), 8);
  EXPECT_EQ(decoder_->codebook_size(), 64);
  EXPECT_EQ(decoder_->sample_rate(), 24000);
  EXPECT_EQ(decoder_->samples_per_frame(), 1920);
  EXPECT_GT(decoder_->weight_bytes(), 0);
  EXPECT_EQ(encoder_->max_codebooks(), 8);
  EXPECT_EQ(encoder_->default_codebooks(), 8);
  EXPECT_EQ(encoder_->codebook_size(), 64);
  EXPECT_EQ(encoder_->sample_rate(), 24000);
  EXPECT_EQ(encoder_->samples_per_frame(), 1920);
}

TEST_F(MimiParity, WholeDecodeMatchesTheReference) {
  const at::Tensor wav = decoder_->decode(codes());
  ASSERT_EQ(wav.sizes(), audio().sizes());
  EXPECT_LT(max_abs_diff(wav, audio()), kTolerance);
}

TEST_F(MimiParity, StreamedDecodeMatchesTheReference) {
  for (const int64_t chunk : {1, 2, 7}) {
    const at::Tensor wav = streamed(*decoder_, codes(), chunk);
    ASSERT_EQ(wav.sizes(), audio().sizes()) << chunk;
    EXPECT_LT(max_abs_diff(wav, audio()), kTolerance) << "chunk " << chunk;
  }
}

TEST_F(MimiParity, StreamingIsExactInDoublePrecision) {
  const Backend float64 = Backend::reference(testing::test_device(), at::kDouble);
  const auto decoder = load_codec_decoder(testing::fixture_dir(kFixture), float64);
  const at::Tensor whole = decoder->decode(codes());
  EXPECT_LT(max_abs_diff(whole, audio()), kTolerance);
  for (const int64_t chunk : {1, 2, 7}) EXPECT_LT(max_abs_diff(streamed(*decoder, codes(), chunk), whole), 1e-6);
}

TEST_F(MimiParity, LongInputsCrossTheTransformerWindow) {
  // 300 frames = 600 transformer positions, past the 250-position window, decoded whole (in
  // 128-frame pieces) and in 13-frame chunks.
  const at::Tensor long_codes = codes().repeat({1, 12});
  const at::Tensor whole = decoder_->decode(long_codes);
  ASSERT_EQ(whole.numel(), 300 * 1920);
  EXPECT_LT(max_abs_diff(whole.narrow(0, 0, audio().numel()), audio()), kTolerance);
  EXPECT_LT(max_abs_diff(streamed(*decoder_, long_codes, 13), whole), kTolerance);
}

TEST_F(MimiParity, StreamsDecodedTogetherMatchDecodedAlone) {
  const at::Tensor a_codes = codes(), b_codes = codes().flip(1).contiguous();
  auto a = decoder_->new_state();
  auto b = decoder_->new_state();
  std::vector<at::Tensor> a_out, b_out;
  const std::vector<int64_t> a_chunks = {3, 3, 9, 10}, b_chunks = {3, 1, 9, 12};
  int64_t a_at = 0, b_at = 0;
  for (size_t i = 0; i < a_chunks.size(); ++i) {
    const auto out = decoder_->decode_streaming(
        {a.get(), b.get()}, {a_codes.narrow(1, a_at, a_chunks[i]), b_codes.narrow(1, b_at, b_chunks[i])});
    a_out.push_back(out[0]);
    b_out.push_back(out[1]);
    a_at += a_chunks[i];
    b_at += b_chunks[i];
  }
  ASSERT_EQ(a_at, 25);
  ASSERT_EQ(b_at, 25);
  EXPECT_LT(max_abs_diff(at::cat(a_out), audio()), kTolerance);
  EXPECT_LT(max_abs_diff(at::cat(b_out), decoder_->decode(b_codes)), kTolerance);
}

TEST_F(MimiParity, EncodeMatchesTheReferenceCodes) {
  const at::Tensor expected = ref_->get("encoded_codes");
  const at::Tensor got = encoder_->encode(ref_->get("waveform_24k").to(at::kFloat));
  ASSERT_EQ(got.sizes(), expected.sizes());
  EXPECT_TRUE(at::equal(got, expected)) << got << expected;
  // The bundled WAV is the same waveform.
  const AudioBuffer wav = read_audio(testing::fixture_dir(kFixture) + "/audio.wav");
  ASSERT_EQ(wav.sample_rate, 24000);
  const at::Tensor samples = at::tensor(wav.samples, at::kFloat);
  EXPECT_TRUE(at::equal(encoder_->encode(samples), expected));
  // Fewer codebooks are the first codebooks of the full encoding (residual quantization).
  EXPECT_TRUE(at::equal(encoder_->encode(samples, 3), expected.narrow(0, 0, 3)));
  // A length that is not a whole frame rounds up.
  EXPECT_EQ(encoder_->encode(samples.narrow(0, 0, 1921)).size(1), 2);
}

// bf16, the dtype a GPU serves in, on the test device: the decoder's rounding through the whole
// network against the float32 reference, whole and streamed. Measured on the CPU (libtorch's bf16
// ops): 0.017 whole, 0.015 streamed; about 3x that allowed. Not yet measured on a GPU.
constexpr double kBf16Tolerance = 0.05;

TEST_F(MimiParity, Bf16DecodeAndStreamingStayWithinTheBf16Tolerance) {
  const Backend& bf16 = testing::test_bf16_backend();
  const auto decoder = load_codec_decoder(testing::fixture_dir(kFixture), bf16);
  const at::Tensor whole = decoder->decode(codes());
  EXPECT_EQ(whole.scalar_type(), at::kFloat);  // the caller's samples are float32 whatever the compute dtype
  ASSERT_EQ(whole.sizes(), audio().sizes());
  const double whole_diff = max_abs_diff(whole, audio());
  const double streamed_diff = max_abs_diff(streamed(*decoder, codes(), 3), audio());
  std::printf("mimi bf16 vs float32 reference: whole %.3g, streamed in 3-frame chunks %.3g\n", whole_diff,
              streamed_diff);
  EXPECT_LT(whole_diff, kBf16Tolerance);
  EXPECT_LT(streamed_diff, kBf16Tolerance);
}

TEST_F(MimiParity, FewerCodebooksDecodeAndStream) {
  const auto four = load_codec_decoder(testing::fixture_dir(kFixture), testing::test_backend(), false, 4);
  EXPECT_EQ(four->num_codebooks(), 4);
  const at::Tensor c4 = codes().narrow(0, 0, 4);
  const at::Tensor whole = four->decode(c4);
  EXPECT_EQ(whole.numel(), audio().numel());
  EXPECT_GT(max_abs_diff(whole, audio()), 1e-3);  // the missing codebooks matter
  EXPECT_LT(max_abs_diff(streamed(*four, c4, 2), whole), kTolerance);
  EXPECT_EQ(testing::error_code_of([&] { four->decode(codes()); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(
      testing::error_code_of([] { load_codec_decoder(testing::fixture_dir(kFixture), Backend::host(), false, 9); }),
      ErrorCode::InvalidArgument);
}

TEST_F(MimiParity, BadInputGivesTypedErrors) {
  at::Tensor too_big = codes().clone();
  too_big[5][11] = 64;
  EXPECT_NE(testing::error_message([&] { decoder_->decode(too_big); }).find("codebook 5, frame 11: code 64"),
            std::string::npos);
  EXPECT_EQ(testing::error_code_of([&] { encoder_->encode(at::zeros({0})); }), ErrorCode::InvalidArgument);
  at::Tensor nan = at::zeros({4000});
  nan[17] = std::nan("");
  EXPECT_EQ(testing::error_code_of([&] { encoder_->encode(nan); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(testing::error_code_of([&] { encoder_->encode(at::zeros({4000}), 9); }), ErrorCode::InvalidArgument);
}

/// The fixture's tensors as stored.
std::vector<std::pair<std::string, at::Tensor>> fixture_tensors() {
  SafetensorsFile file(testing::fixture_dir(kFixture) + "/model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const StTensorInfo& info : file.tensors()) tensors.emplace_back(info.name, read_tensor(file, info));
  return tensors;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The fixture's tensors under moshi's names and layout, as Kyutai's checkpoint stores them:
/// the inverse of transformers' conversion script, written out independently of izwi's mapping.
std::vector<std::pair<std::string, at::Tensor>> moshi_tensors() {
  const int64_t heads = 4, head_dim = 16, hidden = 64;
  const auto interleaved = [&](const at::Tensor& w) {  // undo the conversion's "sliced rotary" permute
    return w.view({heads, 2, head_dim / 2, hidden}).transpose(1, 2).reshape({heads * head_dim, hidden});
  };
  std::map<std::string, at::Tensor> q, k, v;
  std::vector<std::pair<std::string, at::Tensor>> out;
  const std::regex seanet_conv(R"(^(en|de)coder\.layers\.(\d+)\.(block\.\d+\.)?conv\.(weight|bias)$)");
  for (auto [name, value] : fixture_tensors()) {
    std::smatch m;
    if (std::regex_match(name, m, seanet_conv)) {
      const int layer = std::stoi(m[2]);
      const bool transposed = m[1] == "de" && m[3].length() == 0 && layer >= 2 && layer <= 11 && (layer - 2) % 3 == 0;
      name = fmt::format("{}coder.model.{}.{}{}.{}", m[1].str(), layer, m[3].str(),
                         transposed ? "convtr.convtr" : "conv.conv", m[4].str());
    } else if (name == "downsample.conv.weight") {
      name = "downsample.conv.conv.conv.weight";
    } else if (name == "upsample.conv.weight") {
      name = "upsample.convtr.convtr.convtr.weight";
    } else if (name.find("_transformer.") != std::string::npos) {
      name = replace_all(name, "_transformer.layers", "_transformer.transformer.layers");
      for (const auto& [from, to] : {std::pair{"mlp.fc1", "linear1"},
                                     {"mlp.fc2", "linear2"},
                                     {"self_attn.o_proj", "self_attn.out_proj"},
                                     {"input_layernorm", "norm1"},
                                     {"post_attention_layernorm", "norm2"},
                                     {"self_attn_layer_scale", "layer_scale_1"},
                                     {"mlp_layer_scale", "layer_scale_2"}}) {
        name = replace_all(name, from, to);
      }
      const size_t at = name.find("self_attn.");
      const std::string layer = name.substr(0, at);
      if (name.find("q_proj") != std::string::npos) q[layer] = interleaved(value);
      if (name.find("k_proj") != std::string::npos) k[layer] = interleaved(value);
      if (name.find("v_proj") != std::string::npos) v[layer] = value;
      if (name.find("_proj.weight") != std::string::npos && name.find("out_proj") == std::string::npos) continue;
    } else {
      name = replace_all(name, "semantic_residual_vector_quantizer.layers", "rvq_first.vq.layers");
      name = replace_all(name, "acoustic_residual_vector_quantizer.layers", "rvq_rest.vq.layers");
      name = replace_all(name, "semantic_residual_vector_quantizer", "rvq_first");
      name = replace_all(name, "acoustic_residual_vector_quantizer", "rvq_rest");
      name = replace_all(name, "codebook.embed_sum", "_codebook.embedding_sum");
      name = replace_all(name, "codebook.cluster_usage", "_codebook.cluster_usage");
      name = replace_all(name, "codebook.initialized", "_codebook._initialized");
    }
    out.emplace_back(name, value);
  }
  for (const auto& [layer, q_weight] : q) {
    out.emplace_back(layer + "self_attn.in_proj_weight", at::cat({q_weight, k.at(layer), v.at(layer)}, 0));
  }
  return out;
}

TEST(MimiLoading, MoshiNamesLoadAsTheSameCodec) {
  // Kyutai's checkpoint has no config.json; Kyutai's architecture is the default, so the tiny
  // fixture's config sits beside its renamed tensors here, and a bare file is tried below.
  testing::TempDir dir;
  std::ifstream config(testing::fixture_dir(kFixture) + "/config.json");
  dir.write("config.json", std::string(std::istreambuf_iterator<char>(config), {}));
  const auto tensors = moshi_tensors();
  ASSERT_NE(std::find_if(tensors.begin(), tensors.end(),
                         [](const auto& t) {
                           return t.first == "encoder_transformer.transformer.layers.1.self_attn.in_proj_weight";
                         }),
            tensors.end());
  write_safetensors(dir.file("model.safetensors"), tensors, at::kFloat);
  const testing::ReferenceTensors ref(kFixture);
  const auto decoder = load_codec_decoder(dir.path(), Backend::host());
  EXPECT_LT(max_abs_diff(decoder->decode(ref.get("codes")), ref.get("decoded_audio").to(at::kFloat)), kTolerance);
  const auto encoder = load_codec_encoder(dir.path(), Backend::host());
  EXPECT_TRUE(at::equal(encoder->encode(ref.get("waveform_24k").to(at::kFloat)), ref.get("encoded_codes")));
}

TEST(MimiLoading, AModelFolderWithAMoshiFileUsesKyutaisArchitecture) {
  // An LFM2-Audio folder: the model's own config.json and a tokenizer-*.safetensors codec. With
  // no Mimi config the tiny tensors do not fit Kyutai's sizes, and the error names the tensor.
  testing::TempDir dir;
  dir.write("config.json", R"({"lfm": {}, "encoder": {}, "depthformer": {}})");
  write_safetensors(dir.file("tokenizer-e351c8d8-checkpoint125.safetensors"), moshi_tensors(), at::kFloat);
  const std::string message = testing::error_message([&] { load_codec_decoder(dir.path(), Backend::host()); });
  EXPECT_EQ(testing::error_code_of([&] { load_codec_decoder(dir.path(), Backend::host()); }), ErrorCode::InvalidFormat);
  EXPECT_NE(message.find("tokenizer-e351c8d8-checkpoint125.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("quantizer.rvq_first.vq.layers.0._codebook.embedding_sum"), std::string::npos) << message;
}

TEST(MimiLoading, UnsupportedSettingsNameTheField) {
  testing::TempDir dir;
  std::ifstream in(testing::fixture_dir(kFixture) + "/config.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["pad_mode"] = "reflect";
  dir.write("config.json", config.dump());
  std::filesystem::copy_file(testing::fixture_dir(kFixture) + "/model.safetensors", dir.file("model.safetensors"));
  EXPECT_EQ(testing::error_code_of([&] { load_codec_decoder(dir.path(), Backend::host()); }), ErrorCode::Unsupported);
  EXPECT_NE(testing::error_message([&] { load_codec_decoder(dir.path(), Backend::host()); }).find("pad_mode"),
            std::string::npos);
  config["pad_mode"] = "constant";
  config["num_semantic_quantizers"] = 9;
  dir.write("config.json", config.dump());
  const std::string message = testing::error_message([&] { load_codec_encoder(dir.path(), Backend::host()); });
  EXPECT_NE(message.find("num_semantic_quantizers"), std::string::npos) << message;
}

}  // namespace
}  // namespace izwi
