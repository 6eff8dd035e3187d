// ModelInfo::weight_bytes against an independent count: the tensors of every safetensors file a
// model folder holds (the codec's and the encoders' too), from their headers, in the dtype the
// configuration resolves, less the ones the loader skips by design; and int8 / int4 reducing them
// by the packed layouts' sizes (docs/quantization.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/speech_model_folders.h"
#include "common/temp_dir.h"
#include "io/safetensors.h"
#include "izwi/engine.h"

namespace izwi {
namespace {

using testing::fixture_dir;

struct Counted {
  int64_t elements = 0;    ///< every stored tensor's elements, but the skipped
  int64_t bf16_bytes = 0;  ///< with the matrices (2-d) in bf16, the rest float32
  int64_t int8_bytes = 0;  ///< the same with the linear layers int8 and embedding tables bf16
  int64_t int4_bytes = 0;  ///< ... int4 (group 32)
  int64_t linear_matrices = 0;
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// How a stored tensor is held when the weight dtype is int8 / int4.
enum class Held {
  Quantized,  ///< a linear layer (or tied head) packed: int8 one byte a weight (columns in blocks of
              ///< 4) + a float32 scale a row; int4 half a byte a weight (columns in blocks of 8) + an
              ///< fp16 scale per group of 32 columns (the last may be shorter)
  Table,      ///< an embedding table, bf16
  Float,      ///< float32 (norms, biases, convolutions, the codec)
};
using Classify = std::function<Held(const std::string& name, const std::vector<int64_t>& shape)>;
using Skipped = std::function<bool(const std::string&)>;

// Every *.safetensors under `dir` (speech_tokenizer/ and a codec beside the model included), less
// `skipped`: stored tensors the model deliberately leaves.
Counted count(const std::string& dir, const Skipped& skipped, const Classify& classify) {
  Counted c;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::follow_directory_symlink)) {
    if (entry.path().extension() != ".safetensors" || entry.path().filename() == "reference.safetensors") continue;
    const SafetensorsFile file(entry.path().string());
    for (const StTensorInfo& t : file.tensors()) {
      if (skipped && skipped(t.name)) continue;
      c.elements += t.numel();
      c.bf16_bytes += t.numel() * (t.shape.size() == 2 ? 2 : 4);
      switch (classify ? classify(t.name, t.shape) : Held::Float) {
        case Held::Quantized: {
          const int64_t out = t.shape[0], in = t.shape[1];
          c.int8_bytes += out * ((in + 3) / 4 * 4 + 4);
          const int64_t last = in % 32;  // a shorter last group: its columns in blocks of 8
          c.int4_bytes += out * (in / 32 * (16 + 2) + (last > 0 ? (last + 7) / 8 * 4 + 2 : 0));
          ++c.linear_matrices;
          break;
        }
        case Held::Table:
          c.int8_bytes += t.numel() * 2;
          c.int4_bytes += t.numel() * 2;
          break;
        case Held::Float:
          c.int8_bytes += t.numel() * 4;
          c.int4_bytes += t.numel() * 4;
          break;
      }
    }
  }
  return c;
}

// The text models: 2-d matrices other than the token table are linear layers; the table is the
// tied head (quantized) or, untied, a bf16 table.
Classify text_model(bool tied) {
  return [tied](const std::string& name, const std::vector<int64_t>& shape) {
    const bool table = ends_with(name, "embed_tokens.weight");
    if (table && !tied) return Held::Table;
    return shape.size() == 2 ? Held::Quantized : Held::Float;
  };
}

// Qwen3-TTS: the talker's and code predictor's 2-d matrices are linear layers but for their
// embedding tables; the codec (speech_tokenizer/, no "talker." prefix) stays float.
Held qwen3_tts(const std::string& name, const std::vector<int64_t>& shape) {
  if (name.rfind("talker.", 0) != 0 || shape.size() != 2) return Held::Float;
  return name.find("embedding") != std::string::npos ? Held::Table : Held::Quantized;
}

int64_t weight_bytes(const std::string& dir, const std::string& weight_dtype) {
  EngineConfig config;
  config.weight_dtype = weight_dtype;
  config.num_kv_blocks = 16;
  return Engine(dir, config).model_info().weight_bytes;
}

struct TextFixture {
  const char* fixture;
  bool tied;
};

TEST(WeightBytes, TextModelsHoldWhatTheirCheckpointsStore) {
  for (const TextFixture& text :
       {TextFixture{"llama-tiny", false}, TextFixture{"qwen3-tiny", true}, TextFixture{"lfm2-tiny", true}}) {
    SCOPED_TRACE(text.fixture);
    const std::string dir = fixture_dir(text.fixture);
    const Counted expected = count(dir, {}, text_model(text.tied));
    ASSERT_GT(expected.linear_matrices, 0);
    EXPECT_EQ(weight_bytes(dir, "float32"), expected.elements * 4);
    EXPECT_EQ(weight_bytes(dir, "bfloat16"), expected.bf16_bytes);
    EXPECT_EQ(weight_bytes(dir, "int8"), expected.int8_bytes);
    EXPECT_EQ(weight_bytes(dir, "int4"), expected.int4_bytes);
  }
}

// A bf16 checkpoint: "auto" keeps its matrices bf16 as stored (norms in the float32 compute
// dtype), "float32" widens them all.
TEST(WeightBytes, ABf16CheckpointStaysBf16UnderAuto) {
  const std::string dir = fixture_dir("llama-tiny-bf16-sharded");
  const Counted expected = count(dir, {}, text_model(false));
  EXPECT_EQ(weight_bytes(dir, "auto"), expected.bf16_bytes);
  EXPECT_EQ(weight_bytes(dir, "float32"), expected.elements * 4);
}

struct SpeechCase {
  std::string name;
  std::string dir;
  Skipped skipped;
  Classify classify;  ///< empty: int8 and int4 only checked to shrink the bytes
};

// What the loaders leave by design: a codec decoder's quantizer input projections (the encoder's
// half; a Base model's codec encoder takes its own), LFM2-Audio's training-only tensors (the
// audio embedding's norm and logits, loss weights, codebook offsets, batch-norm step counters).
bool codec_decoder_skips(const std::string& name) {
  return name.find("quantizer.") != std::string::npos && ends_with(name, "input_proj.weight") &&
         name.rfind("encoder.", 0) != 0;
}

bool lfm2_audio_skips(const std::string& name) {
  static const std::set<std::string> training = {"audio_embedding.embedding_norm.weight",
                                                 "audio_embedding.to_logits.weight", "codebook_offsets",
                                                 "audio_loss_weights"};
  return training.count(name) != 0 || ends_with(name, "num_batches_tracked") || codec_decoder_skips(name);
}

TEST(WeightBytes, SpeechModelsCountTheirCodecAndEncoders) {
  testing::TempDir base, chat;
  const std::vector<SpeechCase> cases = {
      {"qwen3-tts-tiny (talker, code predictor, codec decoder)", fixture_dir("qwen3-tts-tiny"), codec_decoder_skips,
       qwen3_tts},
      {"Qwen3-TTS Base (with the speaker encoder and the codec's encoder)",
       testing::make_qwen3_tts_base_model(base, true), codec_decoder_skips},
      {"voxtral-realtime-tiny (audio encoder, decoder)", fixture_dir("voxtral-realtime-tiny")},
      {"lfm2-audio-tiny (audio encoder, adapter, backbone, depthformer) with a Mimi codec",
       testing::write_lfm2_audio_with_tokenizer(chat.path(), true), lfm2_audio_skips},
  };
  for (const SpeechCase& speech : cases) {
    SCOPED_TRACE(speech.name);
    const Counted expected = count(speech.dir, speech.skipped, speech.classify);
    const int64_t f32 = weight_bytes(speech.dir, "float32");
    EXPECT_EQ(f32, expected.elements * 4);
    const int64_t int8 = weight_bytes(speech.dir, "int8"), int4 = weight_bytes(speech.dir, "int4");
    EXPECT_LT(int8, f32);
    EXPECT_LT(int4, int8);
    if (speech.classify) {  // where the test knows which matrices are linear layers, to the byte
      EXPECT_EQ(int8, expected.int8_bytes);
      EXPECT_EQ(int4, expected.int4_bytes);
    }
  }
}

}  // namespace
}  // namespace izwi
