#include "audio/log_mel.h"

#include "audio/mel_filter_bank.h"
#include "common/check.h"

namespace izwi {

LogMelFrames::LogMelFrames(const LogMelConfig& config, const at::Device& device) : config_(config) {
  if (config.n_fft < 2 || config.hop <= 0 || config.n_mels <= 0 || config.sample_rate <= 0) {
    fail(ErrorCode::InvalidArgument, "LogMelConfig: n_fft {} (>= 2), hop {}, n_mels {}, sample_rate {} (> 0)",
         config.n_fft, config.hop, config.n_mels, config.sample_rate);
  }
  window_ = at::hann_window(config.n_fft, /*periodic=*/true, at::TensorOptions(at::kFloat).device(device));
  // Up to 8 kHz whatever the rate, as the reference extractor builds them.
  filters_t_ =
      mel_filter_bank(config.n_fft / 2 + 1, config.n_mels, 0.0, 8000.0, config.sample_rate).t().contiguous().to(device);
}

int64_t LogMelFrames::total_frames(int64_t samples) const {
  const int64_t half = config_.n_fft / 2;
  return (samples + 2 * half - config_.n_fft) / config_.hop;
}

void LogMelFrames::check_length(int64_t samples, const char* context) const {
  if (samples <= config_.n_fft / 2) {
    fail(ErrorCode::InvalidArgument, "{}: {} samples; the log-mel frontend needs more than n_fft / 2 = {}", context,
         samples, config_.n_fft / 2);
  }
}

at::Tensor LogMelFrames::compute(const at::Tensor& padded, int64_t count) const {
  if (count == 0) return at::empty({config_.n_mels, 0}, padded.options().dtype(at::kFloat));
  const at::Tensor span = padded.narrow(0, 0, (count - 1) * config_.hop + config_.n_fft);
  const at::Tensor spectrum = at::stft(span, config_.n_fft, config_.hop, config_.n_fft, window_, /*normalized=*/false,
                                       /*onesided=*/true, /*return_complex=*/true);
  const at::Tensor power = spectrum.abs().pow(2);  // as the reference: |X|^2 of the complex STFT
  const at::Tensor log_spec = at::matmul(filters_t_, power).clamp_min(1e-10).log10();
  return (at::clamp_min(log_spec, config_.global_log_mel_max - 8.0) + 4.0) / 4.0;
}

at::Tensor log_mel_spectrogram(const at::Tensor& waveform, const LogMelConfig& config) {
  if (waveform.dim() != 1) {
    fail(ErrorCode::InvalidArgument, "log_mel_spectrogram: waveform must be 1-D, got {}-D", waveform.dim());
  }
  const LogMelFrames frames(config, waveform.device());
  frames.check_length(waveform.size(0), "log_mel_spectrogram");
  const int64_t half = config.n_fft / 2;
  const at::Tensor padded = at::reflection_pad1d(waveform.to(at::kFloat).unsqueeze(0), {half, half}).squeeze(0);
  return frames.compute(padded, frames.total_frames(waveform.size(0)));
}

}  // namespace izwi
