// Inputs sized far past the usual: long codec inputs decode in bounded chunks, exactly, through
// the library and izwi-codec (which streams its output instead of holding the waveform); a voice
// or an audio turn that cannot fit the model's context is refused, naming it, before the work its
// size would cost (decoding the reference, encoding the audio).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

#include "audio/nemo_log_mel.h"
#include "codec/codec_decoder.h"
#include "codec/warm_codec_states.h"
#include "common/cli_run.h"
#include "common/error_message.h"
#include "common/qwen3_tts_base_model.h"
#include "common/reference.h"
#include "common/temp_dir.h"
#include "izwi/audio.h"
#include "izwi/engine.h"
#include "izwi/voice.h"
#include "kernels/backend.h"

namespace izwi {
namespace {

using testing::fixture_dir;

/// `frames` frames of seeded random codes [codebooks, frames] (int64).
at::Tensor random_codes(int64_t codebooks, int64_t frames, int64_t codebook_size) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> code(0, codebook_size - 1);
  at::Tensor codes = at::empty({codebooks, frames}, at::kLong);
  auto a = codes.accessor<int64_t, 2>();
  for (int64_t k = 0; k < codebooks; ++k) {
    for (int64_t f = 0; f < frames; ++f) a[k][f] = code(rng);
  }
  return codes;
}

std::vector<std::vector<int32_t>> frames_of(const at::Tensor& codes) {
  std::vector<std::vector<int32_t>> frames(static_cast<size_t>(codes.size(1)));
  for (int64_t f = 0; f < codes.size(1); ++f) {
    for (int64_t k = 0; k < codes.size(0); ++k) frames[f].push_back(static_cast<int32_t>(codes[k][f].item<int64_t>()));
  }
  return frames;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Several chunks of CodecDecoder::kDecodeChunkFrames, the last one partial.
constexpr int64_t kLongFrames = 2 * CodecDecoder::kDecodeChunkFrames + 45;

TEST(InputSize, ALongStreamingCallDecodesInChunksExactlyAsTheWholeDecode) {
  for (const char* fixture : {"qwen3-tts-codec-decoder-tiny", "mimi-tiny"}) {
    const auto codec = load_codec_decoder(fixture_dir(fixture), Backend::host());
    const at::Tensor codes = random_codes(codec->num_codebooks(), kLongFrames, codec->codebook_size());
    const at::Tensor whole = codec->decode(codes);
    ASSERT_EQ(whole.numel(), kLongFrames * codec->samples_per_frame()) << fixture;
    // One call of many frames runs the forward pass in the same chunks as decode().
    const auto state = codec->new_state();
    EXPECT_TRUE(at::equal(codec->decode_streaming({state.get()}, {codes})[0], whole)) << fixture;
    // A warm state after the long run continues as the whole decode does.
    const int64_t tail = 9;
    WarmCodecStates warm(1);
    const auto after = warm.state_after(*codec, frames_of(codes.narrow(1, 0, kLongFrames - tail)));
    const at::Tensor continued = codec->decode_streaming({after.get()}, {codes.narrow(1, kLongFrames - tail, tail)})[0];
    EXPECT_LT(max_abs_diff(continued, whole.narrow(0, (kLongFrames - tail) * codec->samples_per_frame(),
                                                   tail * codec->samples_per_frame())),
              1e-4)
        << fixture;
  }
}

TEST(InputSize, IzwiCodecStreamsALongDecodeToItsWavAndJson) {
  const std::string fixture = fixture_dir("qwen3-tts-codec-decoder-tiny");
  const auto codec = load_codec_decoder(fixture, Backend::host());
  const at::Tensor codes = random_codes(codec->num_codebooks(), kLongFrames, codec->codebook_size());
  testing::TempDir dir;
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t k = 0; k < codes.size(0); ++k) {
    rows.push_back(std::vector<int64_t>(codes[k].data_ptr<int64_t>(), codes[k].data_ptr<int64_t>() + codes.size(1)));
  }
  const std::string args = "--model " + fixture + " --codes-file " + dir.write("codes.json", rows.dump());
  // --float: the WAV holds the float32 samples themselves, as the JSON does.
  const testing::CliRun run =
      testing::run_example("izwi-codec", args + " --out " + dir.file("out.wav") + " --float --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json line = nlohmann::json::parse(testing::last_line(run.out));
  EXPECT_EQ(line.at("sample_rate"), 24000);
  const std::vector<float> json_samples = line.at("samples").get<std::vector<float>>();
  const AudioBuffer wav = read_audio(dir.file("out.wav"));
  EXPECT_EQ(wav.samples, json_samples);  // both written chunk by chunk from the same audio
  ASSERT_EQ(static_cast<int64_t>(json_samples.size()), kLongFrames * codec->samples_per_frame());
  EXPECT_LT(max_abs_diff(at::tensor(json_samples), codec->decode(codes)), 1e-4);
  const testing::CliRun summary = testing::run_example("izwi-codec", args);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find(std::to_string(kLongFrames) + " frames -> " + std::to_string(json_samples.size())),
            std::string::npos)
      << summary.out;
}

TEST(InputSize, IzwiCodecChecksTheWholeInputBeforeWritingAudio) {
  const std::string fixture = fixture_dir("qwen3-tts-codec-decoder-tiny");
  at::Tensor codes = random_codes(16, kLongFrames, 2048);
  codes[4][kLongFrames - 1] = 2048;  // in the last chunk
  testing::TempDir dir;
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t k = 0; k < codes.size(0); ++k) {
    rows.push_back(std::vector<int64_t>(codes[k].data_ptr<int64_t>(), codes[k].data_ptr<int64_t>() + codes.size(1)));
  }
  const testing::CliRun run =
      testing::run_example("izwi-codec", "--model " + fixture + " --codes-file " +
                                             dir.write("codes.json", rows.dump()) + " --out " + dir.file("out.wav"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("codebook 4, frame " + std::to_string(kLongFrames - 1) + ": code 2048"), std::string::npos)
      << run.err;
  EXPECT_FALSE(std::ifstream(dir.file("out.wav")).good());
}

TEST(InputSize, AVoiceWhoseReferenceCannotFitTheContextIsNamedBeforeAnyWork) {
  testing::TempDir dir;
  const std::string model = testing::make_qwen3_tts_base_model(dir);
  const testing::ReferenceTensors ref("qwen3-tts-tiny");
  const std::vector<int32_t> ids = ref.ids("case1.input_ids");
  Voice voice{"qwen3_tts", std::vector<float>(64, 0.1f)};
  voice.reference_text_ids.assign(ids.begin(), ids.end() - 3);
  // As many frames as the talker's context (max_position_embeddings 32768): the prompt around
  // them cannot fit, whatever max_frames.
  voice.reference_codes.assign(32768, std::vector<int32_t>(16, 5));
  SpeechRequest request;
  request.text_ids = ids;
  request.voice = voice;
  request.params.max_frames = 1;
  Engine engine(model);
  const std::string expected = "voice reference_codes (32768 frames) and reference_text_ids (" +
                               std::to_string(voice.reference_text_ids.size()) + " ids) make a prompt of ";
  EXPECT_EQ(testing::error_code_of([&] { engine.synthesize(request); }), ErrorCode::InvalidArgument);
  const std::string message = testing::error_message([&] { engine.synthesize(request); });
  EXPECT_NE(message.find(expected), std::string::npos) << message;
  EXPECT_NE(message.find("context (max_position_embeddings) is 32768"), std::string::npos) << message;

  // The same through izwi-speak and a voice file.
  save_voice(voice, dir.file("long_voice.json"));
  const testing::CliRun run =
      testing::run_example("izwi-speak", "--model " + model + " --voice-file " + dir.file("long_voice.json") +
                                             " --text-ids 590,500,501,352,78,591,501,590,500,501 --max-frames 4");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("InvalidArgument"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
}

TEST(InputSize, LogMelFramesAreKnownFromTheSampleCount) {
  NemoLogMelConfig config;  // n_fft 512, hop 160
  for (const int64_t pad_to : {int64_t{0}, int64_t{16}}) {
    config.pad_to = pad_to;
    for (const int64_t samples : {160, 161, 319, 320, 16000, 16159}) {
      const at::Tensor waveform = at::rand({samples}, at::kFloat) - 0.5;
      EXPECT_EQ(nemo_log_mel_frames(samples, config), nemo_log_mel(waveform, config).size(1))
          << samples << " samples, pad_to " << pad_to;
    }
  }
}

TEST(InputSize, AudioChatAudioLongerThanTheContextIsRefusedBeforeItIsEncoded) {
  const std::string fixture = fixture_dir("lfm2-audio-tiny");
  const testing::ReferenceTensors ref("lfm2-audio-tiny");
  const std::vector<int32_t> ids = ref.ids("text_ids");
  AudioChatRequest request;
  request.pre_ids.assign(ids.begin(), ids.begin() + 9);
  request.post_ids.assign(ids.begin() + 9, ids.end());
  // 200 s at 16 kHz: 20001 log-mel frames, 2501 audio positions (x8 subsampling), past the
  // context of 2048.
  request.sample_rate = 16000;
  request.audio.resize(200 * 16000);
  for (size_t i = 0; i < request.audio.size(); ++i) request.audio[i] = 0.1f * std::sin(0.05f * static_cast<float>(i));
  Engine engine(fixture);
  EXPECT_EQ(testing::error_code_of([&] { engine.audio_chat(request); }), ErrorCode::InvalidArgument);
  const std::string message = testing::error_message([&] { engine.audio_chat(request); });
  // The early check's words (the engine's late check, after encoding, speaks of max_tokens).
  EXPECT_NE(message.find("audio chat audio: 200.0 s of audio make 2501 audio positions; after the 9 positions before "
                         "them the prompt exceeds the limit of 2048 positions"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace izwi
