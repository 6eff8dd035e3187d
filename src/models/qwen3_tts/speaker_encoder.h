#pragma once
// Qwen3-TTS Base's speaker encoder: an ECAPA-TDNN that turns the log-mel of a few seconds of
// reference speech into one x-vector of the talker's width (the voice a cloned request speaks
// in). As the released `Qwen3TTSSpeakerEncoder` + `extract_speaker_embedding`: every conv pads
// "same" with reflection, no batch norm; SE-Res2Net blocks, multi-layer aggregation, attentive
// statistics pooling with population variance.

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "audio/magnitude_log_mel.h"
#include "common/json_fields.h"
#include "io/hf_config.h"
#include "io/weight_source.h"
#include "kernels/backend.h"

namespace izwi {

struct SpeakerEncoderConfig {
  int64_t mel_dim = 128;
  int64_t enc_dim = 1024;  ///< x-vector width = the talker's hidden size
  std::vector<int64_t> channels = {512, 512, 512, 512, 1536};
  std::vector<int64_t> kernel_sizes = {5, 3, 3, 3, 1};
  std::vector<int64_t> dilations = {1, 2, 3, 4, 1};
  int64_t attention_channels = 128;
  int64_t res2net_scale = 8;
  int64_t se_channels = 128;
  int32_t sample_rate = 24000;

  /// `speaker_encoder_config` of a Qwen3-TTS config.json; InvalidFormat naming a bad field.
  static SpeakerEncoderConfig parse(const JsonFields& fields);
  /// The log-mel the encoder reads (n_fft 1024, hop 256, 0-12 kHz at 24 kHz).
  MagnitudeLogMelConfig mel() const;
};

class SpeakerEncoder {
 public:
  /// Takes `<prefix>blocks.*`, `mfa.*`, `asp.*` and `fc.*` (prefix e.g. "speaker_encoder.").
  SpeakerEncoder(WeightSource& weights, const std::string& prefix, const SpeakerEncoderConfig& config);

  const SpeakerEncoderConfig& config() const { return config_; }

  /// The x-vector [enc_dim] (float32, CPU) of log-mel features [frames, mel_dim], computed in the
  /// weights' dtype and device.
  at::Tensor embed_mel(const at::Tensor& mel) const;
  /// The log-mel [frames, mel_dim] of a mono waveform at config().sample_rate. InvalidArgument
  /// for audio too short (under kMinSeconds) or silent (peak under kSilencePeak).
  at::Tensor mel(const at::Tensor& waveform) const;
  /// embed_mel(mel(waveform)).
  at::Tensor embed(const at::Tensor& waveform) const { return embed_mel(mel(waveform)); }

  static constexpr double kMinSeconds = 0.5;
  static constexpr float kSilencePeak = 1e-4f;  ///< -80 dBFS

 private:
  /// One Conv1d with reflection "same" padding.
  struct Conv {
    at::Tensor weight, bias;
    int64_t dilation = 1;
    const Backend* backend = nullptr;  ///< the weights' (WeightSource::backend)
    at::Tensor operator()(const at::Tensor& x) const;
  };
  struct SeRes2NetBlock {
    Conv tdnn1, tdnn2, se1, se2;
    std::vector<Conv> res2net;  ///< scale - 1 convs
    at::Tensor forward(const at::Tensor& x) const;
  };

  SpeakerEncoderConfig config_;
  Conv block0_, mfa_, asp_tdnn_, asp_conv_, fc_;
  std::vector<SeRes2NetBlock> blocks_;
};

/// The speaker_encoder_config of a Qwen3-TTS Base config.json. InvalidFormat naming the file for
/// another tts_model_type or a config without one.
SpeakerEncoderConfig speaker_encoder_config(const HfConfig& config);

/// Loads the speaker encoder of the Qwen3-TTS Base folder `model_dir` (config.json's
/// speaker_encoder_config, `speaker_encoder.*` tensors; the rest of the checkpoint is ignored),
/// its weights in `backend`'s compute dtype on its device and its ops run there, as
/// load_codec_decoder's (tools and tests outside an engine: Backend::host(); `backend` must
/// outlive the encoder). NotFound or InvalidFormat naming the file, field or tensor.
SpeakerEncoder load_speaker_encoder(const std::string& model_dir, const Backend& backend = Backend::host());

}  // namespace izwi
