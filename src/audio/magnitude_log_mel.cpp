#include "audio/magnitude_log_mel.h"

#include "audio/mel_filter_bank.h"
#include "common/check.h"

#include <algorithm>

namespace izwi {

at::Tensor magnitude_log_mel(const at::Tensor& waveform, const MagnitudeLogMelConfig& config, const char* context) {
  if (config.n_fft < 2 || config.hop <= 0 || config.hop > config.n_fft || config.n_mels <= 0 ||
      config.sample_rate <= 0) {
    fail(ErrorCode::InvalidArgument, "{}: n_fft {} (>= 2), hop {} (1..n_fft), n_mels {}, sample_rate {} (> 0)", context,
         config.n_fft, config.hop, config.n_mels, config.sample_rate);
  }
  if (waveform.dim() != 1)
    fail(ErrorCode::InvalidArgument, "{}: waveform must be 1-D, got {}-D", context, waveform.dim());
  const int64_t pad = (config.n_fft - config.hop) / 2;
  const int64_t samples = waveform.size(0);
  if (samples <= pad || samples < config.hop) {
    fail(ErrorCode::InvalidArgument, "{}: {} samples; the log-mel needs at least {}", context, samples,
         std::max<int64_t>(pad + 1, config.hop));
  }
  const at::Tensor x = waveform.to(at::kFloat).contiguous();
  const at::Tensor padded = at::reflection_pad1d(x.unsqueeze(0), {pad, pad}).squeeze(0);
  const at::Tensor window = at::hann_window(config.n_fft, /*periodic=*/true, x.options());
  const at::Tensor spectrum = at::stft(padded, config.n_fft, config.hop, config.n_fft, window, /*normalized=*/false,
                                       /*onesided=*/true, /*return_complex=*/true);  // [bins, frames]
  const at::Tensor magnitude = (at::real(spectrum).pow(2) + at::imag(spectrum).pow(2) + 1e-9).sqrt();
  const at::Tensor filters =
      mel_filter_bank(config.n_fft / 2 + 1, config.n_mels, config.f_min, config.f_max, config.sample_rate)
          .to(x.device());  // [bins, mels]
  return at::matmul(magnitude.t(), filters).clamp_min(1e-5).log();
}

}  // namespace izwi
