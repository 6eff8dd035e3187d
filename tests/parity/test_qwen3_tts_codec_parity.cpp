// The Qwen3-TTS 12 Hz codec decoder against the released code (fixture
// qwen3-tts-codec-decoder-tiny): whole decode, exact streaming in several chunkings, batched
// streams, the released nested folder layout, and typed errors for bad input.

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_support/safetensors_writer.h"
#include "codec/codec_checkpoint.h"
#include "codec/codec_decoder.h"
#include "common/error_message.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "common/test_device.h"
#include "io/safetensors.h"
#include "io/safetensors_tensor.h"
#include "kernels/backend.h"
#include "kernels/cpu/panel_kernels.h"

namespace izwi {
namespace {

using testing::max_abs_diff;

constexpr double kTolerance = 1e-4;
const char* const kFixture = "qwen3-tts-codec-decoder-tiny";

class CodecParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ref_ = new testing::ReferenceTensors(kFixture);
    codec_ = load_codec_decoder(testing::fixture_dir(kFixture), testing::test_backend()).release();
  }
  static void TearDownTestSuite() {
    delete codec_;
    delete ref_;
  }
  static at::Tensor codes() { return ref_->get("codes"); }
  static at::Tensor waveform() { return ref_->get("waveform").to(at::kFloat); }

  /// Streams `codes` through one state in chunks of `chunk` frames and concatenates the output.
  static at::Tensor streamed(const at::Tensor& all, int64_t chunk) {
    auto state = codec_->new_state();
    std::vector<at::Tensor> pieces;
    for (int64_t f = 0; f < all.size(1); f += chunk) {
      const at::Tensor out =
          codec_->decode_streaming({state.get()}, {all.narrow(1, f, std::min(chunk, all.size(1) - f))})[0];
      EXPECT_EQ(out.numel(), std::min(chunk, all.size(1) - f) * codec_->samples_per_frame());
      pieces.push_back(out);
    }
    return at::cat(pieces);
  }

  static testing::ReferenceTensors* ref_;
  static CodecDecoder* codec_;
};

testing::ReferenceTensors* CodecParity::ref_ = nullptr;
CodecDecoder* CodecParity::codec_ = nullptr;

TEST_F(CodecParity, DescribesTheCodec) {
  EXPECT_EQ(codec_->num_codebooks(), 16);
  EXPECT_EQ(codec_->codebook_size(), 2048);
  EXPECT_EQ(codec_->sample_rate(), 24000);
  EXPECT_EQ(codec_->samples_per_frame(), 1920);
  EXPECT_GT(codec_->weight_bytes(), 0);
}

TEST_F(CodecParity, WholeDecodeMatchesTheReference) {
  const at::Tensor wav = codec_->decode(codes());
  ASSERT_EQ(wav.sizes(), waveform().sizes());
  EXPECT_EQ(wav.scalar_type(), at::kFloat);
  EXPECT_LT(max_abs_diff(wav, waveform()), kTolerance);
}

TEST_F(CodecParity, StreamedDecodeMatchesTheWholeDecode) {
  for (const int64_t chunk : {1, 3, 12}) {
    const at::Tensor wav = streamed(codes(), chunk);
    ASSERT_EQ(wav.sizes(), waveform().sizes()) << chunk;
    EXPECT_LT(max_abs_diff(wav, waveform()), kTolerance) << "chunk " << chunk;
  }
}

TEST_F(CodecParity, PanelKernelsMatchTheReference) {
  // The engine's codec runs its dense convolutions on the CPU panel kernels (every variant: its
  // weights are float32, which avx512_bf16 multiplies in float32 too).
  for (const PanelKernels* kernels : supported_panel_kernels()) {
    const Backend pinned = Backend::host(*kernels);
    const auto codec = load_codec_decoder(testing::fixture_dir(kFixture), pinned);
    EXPECT_LT(max_abs_diff(codec->decode(codes()), waveform()), kTolerance) << kernels->name;
    auto state = codec->new_state();
    std::vector<at::Tensor> pieces;
    for (int64_t f = 0; f < codes().size(1); f += 3) {
      pieces.push_back(
          codec->decode_streaming({state.get()}, {codes().narrow(1, f, std::min<int64_t>(3, codes().size(1) - f))})[0]);
    }
    EXPECT_LT(max_abs_diff(at::cat(pieces), waveform()), kTolerance) << kernels->name;
  }
}

TEST_F(CodecParity, StreamingIsExactInDoublePrecision) {
  // In float32 the network amplifies rounding to ~5e-5 (the reference itself is that far from a
  // float64 decode), so exactness of the streaming carry-over is shown in float64 (outputs are
  // float32, so 1e-6 allows their last-bit rounding).
  const Backend float64 = Backend::reference(at::kCPU, at::kDouble);
  const auto codec = load_codec_decoder(testing::fixture_dir(kFixture), float64);
  const at::Tensor whole = codec->decode(codes());
  EXPECT_LT(max_abs_diff(whole, waveform()), kTolerance);
  for (const int64_t chunk : {1, 3, 12}) {
    auto state = codec->new_state();
    std::vector<at::Tensor> pieces;
    for (int64_t f = 0; f < 40; f += chunk) {
      pieces.push_back(
          codec->decode_streaming({state.get()}, {codes().narrow(1, f, std::min<int64_t>(chunk, 40 - f))})[0]);
    }
    EXPECT_LT(max_abs_diff(at::cat(pieces), whole), 1e-6) << "chunk " << chunk;
  }
}

TEST_F(CodecParity, LongInputsTakeTheLargeConvPathAndStillMatchStreaming) {
  // 160 frames: decode()'s 128-frame pieces are large enough for the convolutions to take
  // at::conv1d, while 12-frame streaming chunks take the im2col / depthwise paths.
  const at::Tensor long_codes = codes().repeat({1, 4});
  const at::Tensor whole = codec_->decode(long_codes);
  ASSERT_EQ(whole.numel(), 160 * 1920);
  EXPECT_LT(max_abs_diff(whole.narrow(0, 0, 76800), waveform()), kTolerance);
  EXPECT_LT(max_abs_diff(streamed(long_codes, 12), whole), kTolerance);
}

TEST_F(CodecParity, StreamsDecodedTogetherMatchDecodedAlone) {
  // Stream a: all 40 frames in chunks 5, 5, 7, ...; stream b: the frames reversed in time, in
  // chunks 5, 2, 5, ... so some calls group both streams and some do not. On izwi's CPU kernels
  // a group's decoder blocks run one stream at a time; with libtorch's ops (as on a GPU) as one batch.
  const Backend torch = Backend::reference(testing::test_device(), at::kFloat);
  const auto on_torch = load_codec_decoder(testing::fixture_dir(kFixture), torch);
  for (const CodecDecoder* codec : std::vector<const CodecDecoder*>{codec_, on_torch.get()}) {
    const char* kernels = codec == codec_ ? "test backend" : "libtorch ops";
    const at::Tensor a_codes = codes();
    const at::Tensor b_codes = codes().flip(1).contiguous();
    auto a = codec->new_state();
    auto b = codec->new_state();
    std::vector<at::Tensor> a_out, b_out;
    const std::vector<int64_t> a_chunks = {5, 5, 7, 3, 10, 10}, b_chunks = {5, 2, 5, 8, 10, 10};
    int64_t a_at = 0, b_at = 0;
    for (size_t i = 0; i < a_chunks.size(); ++i) {
      const std::vector<at::Tensor> out = codec->decode_streaming(
          {a.get(), b.get()}, {a_codes.narrow(1, a_at, a_chunks[i]), b_codes.narrow(1, b_at, b_chunks[i])});
      ASSERT_EQ(out.size(), 2u);
      a_out.push_back(out[0]);
      b_out.push_back(out[1]);
      a_at += a_chunks[i];
      b_at += b_chunks[i];
    }
    ASSERT_EQ(a_at, 40);
    ASSERT_EQ(b_at, 40);
    EXPECT_LT(max_abs_diff(at::cat(a_out), waveform()), kTolerance) << kernels;
    EXPECT_LT(max_abs_diff(at::cat(b_out), codec->decode(b_codes)), kTolerance) << kernels;
  }
}

TEST_F(CodecParity, BadCodesGiveTypedErrors) {
  at::Tensor too_big = codes().clone();
  too_big[3][7] = 2048;
  EXPECT_EQ(testing::error_code_of([&] { codec_->decode(too_big); }), ErrorCode::InvalidArgument);
  EXPECT_NE(testing::error_message([&] { codec_->decode(too_big); }).find("codebook 3, frame 7: code 2048"),
            std::string::npos);
  at::Tensor negative = codes().clone();
  negative[0][39] = -1;
  EXPECT_NE(testing::error_message([&] { codec_->decode(negative); }).find("codebook 0, frame 39: code -1"),
            std::string::npos);
  const at::Tensor fifteen = codes().narrow(0, 0, 15);
  EXPECT_EQ(testing::error_code_of([&] { codec_->decode(fifteen); }), ErrorCode::InvalidArgument);
  EXPECT_NE(testing::error_message([&] { codec_->decode(fifteen); }).find("15 codebooks"), std::string::npos);
  auto state = codec_->new_state();
  EXPECT_NE(testing::error_message([&] {
              codec_->decode_streaming({state.get()}, {too_big});
            }).find("stream 0: codebook 3, frame 7"),
            std::string::npos);
  EXPECT_EQ(testing::error_code_of([&] { codec_->decode_streaming({state.get()}, {codes().narrow(1, 0, 0)}); }),
            ErrorCode::InvalidArgument);
  // A failed call leaves the state usable: streaming afterwards still matches.
  std::vector<at::Tensor> pieces;
  for (int64_t f = 0; f < 40; f += 20)
    pieces.push_back(codec_->decode_streaming({state.get()}, {codes().narrow(1, f, 20)})[0]);
  EXPECT_LT(max_abs_diff(at::cat(pieces), waveform()), kTolerance);
}

// bf16, the dtype a GPU serves in, on the test device: its rounding through the whole network
// against the float32 reference, whole and streamed. This random tiny codec amplifies rounding
// (float32 lands 5e-5 from float64, ~400 ulps), so bf16 is far off: measured on the CPU (libtorch's
// bf16 ops) max abs 0.148 whole, 0.132 streamed, relative rms 0.131 and 0.134; about 3x that
// allowed (a silent or garbled decode has relative rms ~1). Not yet measured on a GPU.
constexpr double kBf16Tolerance = 0.45, kBf16RelativeRms = 0.4;

TEST(CodecParityBf16, DecodeAndStreamingWithinTheBf16Tolerance) {
  const Backend& bf16 = testing::test_bf16_backend();
  const testing::ReferenceTensors ref(kFixture);
  const at::Tensor codes = ref.get("codes"), waveform = ref.get("waveform").to(at::kFloat);
  const auto codec = load_codec_decoder(testing::fixture_dir(kFixture), bf16);
  const at::Tensor whole = codec->decode(codes);
  EXPECT_EQ(whole.scalar_type(), at::kFloat);  // the caller's samples are float32 whatever the compute dtype
  ASSERT_EQ(whole.sizes(), waveform.sizes());
  auto state = codec->new_state();
  std::vector<at::Tensor> pieces;
  for (int64_t f = 0; f < codes.size(1); f += 3) {
    pieces.push_back(
        codec->decode_streaming({state.get()}, {codes.narrow(1, f, std::min<int64_t>(3, codes.size(1) - f))})[0]);
  }
  const at::Tensor streamed = at::cat(pieces);
  const auto relative_rms = [&](const at::Tensor& wav) {
    return ((wav - waveform).pow(2).mean() / waveform.pow(2).mean()).sqrt().item<double>();
  };
  std::printf("qwen3-tts codec bf16 vs float32 reference: max abs whole %.3g, streamed %.3g; relative rms %.3g, %.3g\n",
              max_abs_diff(whole, waveform), max_abs_diff(streamed, waveform), relative_rms(whole),
              relative_rms(streamed));
  for (const at::Tensor& wav : {whole, streamed}) {
    EXPECT_LT(max_abs_diff(wav, waveform), kBf16Tolerance);
    EXPECT_LT(relative_rms(wav), kBf16RelativeRms);
  }
}

TEST(CodecLoading, TheCodecLoadsForTheBackendItIsGiven) {
  // A model passes its own backend, so the codec's ops run where the model's do (on a GPU, its
  // kernels); its weights are packed only for a backend whose CPU kernels take them.
  const CodecCheckpoint checkpoint = find_codec_checkpoint(testing::fixture_dir(kFixture));
  const Backend torch = Backend::reference(at::kCPU, at::kFloat);
  const auto reference_weights = open_codec_weights(checkpoint, torch, false);
  EXPECT_EQ(&reference_weights->backend(), &torch);
  EXPECT_EQ(reference_weights->cpu_kernels(), nullptr);
  const auto host_weights = open_codec_weights(checkpoint, Backend::host(), false);
  EXPECT_EQ(&host_weights->backend(), &Backend::host());
  EXPECT_EQ(host_weights->cpu_kernels(), Backend::host().panel_kernels());
  // Both decode the reference codes alike.
  const auto on_torch = load_codec_decoder(testing::fixture_dir(kFixture), torch);
  const auto on_host = load_codec_decoder(testing::fixture_dir(kFixture), Backend::host());
  const at::Tensor codes = at::randint(0, on_host->codebook_size(), {on_host->num_codebooks(), 6}, at::kLong);
  EXPECT_LT(max_abs_diff(on_torch->decode(codes), on_host->decode(codes)), kTolerance);
}

TEST(CodecLoading, MissingFilesAreNotFound) {
  EXPECT_EQ(testing::error_code_of([] { load_codec_decoder("/no/such/codec", Backend::host()); }), ErrorCode::NotFound);
  EXPECT_NE(
      testing::error_message([] { load_codec_decoder("/no/such/codec", Backend::host()); }).find("/no/such/codec"),
      std::string::npos);
  testing::TempDir dir;
  EXPECT_NE(testing::error_message([&] { load_codec_decoder(dir.path(), Backend::host()); }).find("config.json"),
            std::string::npos);
  std::ifstream config(testing::fixture_dir(kFixture) + "/config.json");
  dir.write("config.json", std::string(std::istreambuf_iterator<char>(config), {}));
  EXPECT_EQ(testing::error_code_of([&] { load_codec_decoder(dir.path(), Backend::host()); }), ErrorCode::NotFound);
}

/// The fixture's tensors (name, value) as stored.
std::vector<std::pair<std::string, at::Tensor>> fixture_tensors() {
  SafetensorsFile file(testing::fixture_dir(kFixture) + "/model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const StTensorInfo& info : file.tensors()) tensors.emplace_back(info.name, read_tensor(file, info));
  return tensors;
}

nlohmann::json fixture_config() {
  std::ifstream in(testing::fixture_dir(kFixture) + "/config.json");
  return nlohmann::json::parse(in);
}

TEST(CodecLoading, ConfigThatDisagreesWithTheTensorsNamesTheTensor) {
  testing::TempDir dir;
  nlohmann::json config = fixture_config();
  config["latent_dim"] = 48;
  dir.write("config.json", config.dump());
  write_safetensors(dir.file("model.safetensors"), fixture_tensors(), at::kFloat);
  const std::string message = testing::error_message([&] { load_codec_decoder(dir.path(), Backend::host()); });
  EXPECT_EQ(testing::error_code_of([&] { load_codec_decoder(dir.path(), Backend::host()); }), ErrorCode::InvalidFormat);
  EXPECT_NE(message.find("pre_conv.conv.weight"), std::string::npos) << message;
}

TEST(CodecLoading, TheReleasedNestedLayoutLoadsAndDecodesTheSame) {
  // speech_tokenizer/ as released: nested decoder_config, decoder.-prefixed tensors, encoder.* too.
  testing::TempDir dir;
  const std::string folder = dir.path() + "/speech_tokenizer";
  std::filesystem::create_directories(folder);
  const nlohmann::json config = {{"model_type", "qwen3_tts_tokenizer_12hz"},
                                 {"decoder_config", fixture_config()},
                                 {"encoder_config", nlohmann::json::object()},
                                 {"encoder_valid_num_quantizers", 16},
                                 {"input_sample_rate", 24000},
                                 {"output_sample_rate", 24000},
                                 {"encode_downsample_rate", 1920},
                                 {"decode_upsample_rate", 1920}};
  dir.write("speech_tokenizer/config.json", config.dump());
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (auto& [name, value] : fixture_tensors()) tensors.emplace_back("decoder." + name, value);
  tensors.emplace_back("encoder.x", at::ones({3}));
  write_safetensors(folder + "/model.safetensors", tensors, at::kFloat);
  // The model folder above has its own (talker) config.json and weights, which the codec ignores.
  dir.write("config.json", R"({"model_type": "qwen3_tts", "talker_config": {}})");

  const testing::ReferenceTensors ref(kFixture);
  // Both the speech_tokenizer folder and the model folder above it load.
  for (const std::string& path : {folder, dir.path()}) {
    const auto codec = load_codec_decoder(path, Backend::host());
    EXPECT_LT(max_abs_diff(codec->decode(ref.get("codes")), ref.get("waveform").to(at::kFloat)), kTolerance) << path;
  }
}

}  // namespace
}  // namespace izwi
