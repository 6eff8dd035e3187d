#include "audio/nemo_log_mel.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "common/check.h"
#include "io/hf_config.h"

namespace izwi {
namespace {

constexpr double kNormEpsilon = 1e-5;  // NeMo's CONSTANT, added to every std

// Python's int(seconds * rate), saturated so that a huge value fails the range check instead of
// overflowing the cast.
int64_t to_samples(double seconds, int64_t rate) {
  const double samples = seconds * static_cast<double>(rate);
  return samples >= 1e12 ? int64_t{1'000'000'000'000} : static_cast<int64_t>(samples);
}

void require_option(const JsonFields& p, const std::string& key, const std::string& fallback,
                    const std::string& supported) {
  const std::string value = p.get_or<std::string>(key, fallback);
  if (value != supported) {
    fail(ErrorCode::Unsupported, "{}: field '{}' is '{}'; only '{}' is supported", p.origin(), key, value, supported);
  }
}

// Slaney mel filters [n_fft / 2 + 1, n_mels] built in float32 as torchaudio's
// melscale_fbanks(norm="slaney", mel_scale="slaney") builds them, which the reference fixture
// used in place of librosa's. The two agree to ~3e-7 per weight, but a weight at a triangle's
// edge is a small difference of large frequencies, and in a near-silent mel band whose energy
// sits at that edge the disagreement survives the log and the normalisation as ~1e-4; so the
// arithmetic is the reference's, op for op (mel_filter_bank.h computes librosa's in float64).
at::Tensor slaney_filters(const NemoLogMelConfig& c, const at::Device& device) {
  const at::TensorOptions f32 = at::TensorOptions().dtype(at::kFloat);  // on the CPU, as the reference
  const int64_t n_freqs = c.n_fft / 2 + 1;
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double log_step = std::log(6.4) / 27.0;
  const auto hz_to_mel = [&](double hz) {  // in float64, as torchaudio's scalar _hz_to_mel
    return hz >= min_log_hz ? min_log_mel + std::log(hz / min_log_hz) / log_step : hz / f_sp;
  };
  const at::Tensor all_freqs = at::linspace(0.0, static_cast<double>(c.sample_rate / 2), n_freqs, f32);
  const at::Tensor mel_points = at::linspace(hz_to_mel(c.f_min), hz_to_mel(c.f_max), c.n_mels + 2, f32);
  // _mel_to_hz: linear below 1 kHz, then the log part recomputed on the selected points only.
  at::Tensor f_pts = 0.0 + f_sp * mel_points;
  const at::Tensor log_part = mel_points.ge(min_log_mel);
  f_pts.index_put_({log_part}, min_log_hz * at::exp(log_step * (mel_points.index({log_part}) - min_log_mel)));
  // _create_triangular_filterbank, then the slaney area normalisation.
  const int64_t n = c.n_mels;
  const at::Tensor f_diff = f_pts.narrow(0, 1, n + 1) - f_pts.narrow(0, 0, n + 1);
  const at::Tensor slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1);  // [n_freqs, n + 2]
  const at::Tensor down = (-1.0 * slopes.narrow(1, 0, n)) / f_diff.narrow(0, 0, n);
  const at::Tensor up = slopes.narrow(1, 2, n) / f_diff.narrow(0, 1, n);
  const at::Tensor filters = at::max(at::zeros({1}, f32), at::min(down, up));
  const at::Tensor area_norm = 2.0 / (f_pts.narrow(0, 2, n) - f_pts.narrow(0, 0, n));
  return (filters * area_norm.unsqueeze(0)).to(device);
}

}  // namespace

NemoLogMelConfig NemoLogMelConfig::parse(const JsonFields& p) {
  NemoLogMelConfig c;
  const std::string& origin = p.origin();
  c.sample_rate = p.get_or<int64_t>("sample_rate", c.sample_rate);
  require_in_range(origin, {{"sample_rate", c.sample_rate, 1, 1'000'000}});
  // NeMo takes sizes in seconds (window_size, window_stride) or in samples (n_window_*).
  const double window_size = p.get_or<double>("window_size", 0.02);
  const double window_stride = p.get_or<double>("window_stride", 0.01);
  // In seconds: a window or hop over a second is no speech frontend (and a huge one overflows the cast).
  require_real_in_range(origin, {{"window_size", window_size, 0, 1}, {"window_stride", window_stride, 0, 1}});
  c.win_length = p.has("window_size") || !p.has("n_window_size") ? to_samples(window_size, c.sample_rate)
                                                                 : p.get<int64_t>("n_window_size");
  c.hop = p.has("window_stride") || !p.has("n_window_stride") ? to_samples(window_stride, c.sample_rate)
                                                              : p.get<int64_t>("n_window_stride");
  require_in_range(origin, {{"window_size", c.win_length, 1, 1 << 16}, {"window_stride", c.hop, 1, 1 << 16}});
  // Default n_fft: the smallest power of two holding the window.
  int64_t pow2 = 1;
  while (pow2 < c.win_length) pow2 *= 2;
  c.n_fft = p.get_or<int64_t>("n_fft", pow2);
  c.n_mels = p.get_or<int64_t>("features", 64);
  c.pad_to = p.get_or<int64_t>("pad_to", 16);
  require_in_range(origin, {{"n_fft", c.n_fft, std::max<int64_t>(2, c.win_length), 1 << 16},
                            {"features", c.n_mels, 1, kMaxMelBins},
                            {"pad_to", c.pad_to, 0, 1 << 16}});
  c.pad_value = p.get_or<double>("pad_value", 0.0);
  // An explicit null disables pre-emphasis.
  const nlohmann::json& json = p.json();
  const bool no_preemphasis = json.contains("preemph") && json["preemph"].is_null();
  c.preemphasis = no_preemphasis ? 0.0 : p.get_or<double>("preemph", c.preemphasis);
  c.f_min = p.get_or<double>("lowfreq", 0.0);
  c.f_max = p.get_or<double>("highfreq", static_cast<double>(c.sample_rate / 2));
  const double nyquist = static_cast<double>(c.sample_rate) / 2;
  require_real_in_range(
      origin, {{"lowfreq", c.f_min, 0, nyquist}, {"highfreq", c.f_max, 0, nyquist}, {"preemph", c.preemphasis, 0, 1}});
  if (!std::isfinite(c.pad_value)) fail(ErrorCode::InvalidFormat, "{}: field 'pad_value' must be finite", origin);
  if (c.f_max <= c.f_min) {
    fail(ErrorCode::InvalidFormat, "{}: field 'highfreq' ({}) must be above 'lowfreq' ({})", origin, c.f_max, c.f_min);
  }
  if (json.contains("log_zero_guard_value") && json["log_zero_guard_value"].is_string()) {
    const std::string guard = json["log_zero_guard_value"].get<std::string>();
    if (guard != "tiny" && guard != "eps") {
      fail(ErrorCode::InvalidFormat, "{}: field 'log_zero_guard_value' is '{}' (a number, 'tiny' or 'eps')", origin,
           guard);
    }
    c.log_guard = guard == "tiny" ? FLT_MIN : FLT_EPSILON;  // torch.finfo(float32)
  } else {
    c.log_guard = p.get_or<double>("log_zero_guard_value", c.log_guard);
    require_real_in_range(origin, {{"log_zero_guard_value", c.log_guard, 0, 1}});
  }
  // What this implementation computes; NeMo's other options are reported, not ignored. Dither is
  // a training-time augmentation and does not apply.
  require_option(p, "normalize", "per_feature", "per_feature");
  require_option(p, "window", "hann", "hann");
  require_option(p, "log_zero_guard_type", "add", "add");
  require_option(p, "mel_norm", "slaney", "slaney");
  if (!p.get_or<bool>("log", true)) fail(ErrorCode::Unsupported, "{}: field 'log' false is not supported", origin);
  if (p.get_or<bool>("exact_pad", false) || p.get_or<bool>("use_torchaudio", false)) {
    fail(ErrorCode::Unsupported, "{}: fields 'exact_pad' and 'use_torchaudio' must be false", origin);
  }
  if (p.get_or<int64_t>("frame_splicing", 1) != 1) {
    fail(ErrorCode::Unsupported, "{}: field 'frame_splicing' must be 1", origin);
  }
  if (p.get_or<double>("mag_power", 2.0) != 2.0) {
    fail(ErrorCode::Unsupported, "{}: field 'mag_power' must be 2 (a power spectrum)", origin);
  }
  return c;
}

int64_t nemo_log_mel_frames(int64_t samples, const NemoLogMelConfig& c) {
  // The centred STFT's frames over the signal padded by n_fft / 2 each side, then pad_to.
  const int64_t frames = 1 + (samples + 2 * (c.n_fft / 2) - c.n_fft) / c.hop;
  return c.pad_to > 0 ? (frames + c.pad_to - 1) / c.pad_to * c.pad_to : frames;
}

at::Tensor nemo_log_mel(const at::Tensor& waveform, const NemoLogMelConfig& c) {
  if (waveform.dim() != 1) {
    fail(ErrorCode::InvalidArgument, "nemo_log_mel: waveform must be 1-D, got {}-D", waveform.dim());
  }
  const int64_t samples = waveform.size(0);
  const int64_t half = c.n_fft / 2;
  // NeMo's get_seq_len: the frames whose window lies inside the signal; the centred STFT has one more.
  const int64_t valid = (samples + 2 * half - c.n_fft) / c.hop;
  if (samples == 0 || valid < 1) {
    fail(ErrorCode::InvalidArgument, "nemo_log_mel: {} samples; at least one hop ({} samples) is needed", samples,
         c.hop);
  }
  at::Tensor x = waveform.to(at::kFloat);
  if (!at::isfinite(x).all().item<bool>()) {
    fail(ErrorCode::InvalidArgument, "nemo_log_mel: the waveform holds a non-finite sample");
  }
  if (c.preemphasis != 0.0 && samples > 1) {
    x = at::cat({x.narrow(0, 0, 1), x.narrow(0, 1, samples - 1) - c.preemphasis * x.narrow(0, 0, samples - 1)});
  }
  const at::TensorOptions options = x.options();
  // The STFT in float64, its power rounded to float32: bins ~80 dB below a frame's peak carry the
  // FFT's rounding into the log, and float32 FFT libraries round differently (the reference's is
  // not necessarily this libtorch's); the exact transform leaves only the reference's rounding.
  // torch.stft centres the shorter (float32) window inside n_fft; at::stft does the same.
  const at::Tensor window = at::hann_window(c.win_length, /*periodic=*/false, options).to(at::kDouble);
  const at::Tensor padded = at::constant_pad_nd(x.to(at::kDouble), {half, half}, 0.0);
  const at::Tensor spectrum = at::stft(padded, c.n_fft, c.hop, c.win_length, window, /*normalized=*/false,
                                       /*onesided=*/true, /*return_complex=*/true);
  // |X| as NeMo computes it (sqrt of re^2 + im^2), then squared: the power spectrum.
  const at::Tensor power = at::view_as_real(spectrum).pow(2).sum(-1).sqrt().pow(2.0).to(at::kFloat);
  const at::Tensor filters_t = slaney_filters(c, x.device()).t();
  const at::Tensor log_mel = at::log(at::matmul(filters_t, power) + c.log_guard);  // [n_mels, frames]

  // Per-feature normalisation over the valid frames: mean and unbiased std (+ 1e-5).
  const int64_t frames = log_mel.size(1);
  const at::Tensor in_range = at::arange(frames, options.dtype(at::kLong)).lt(valid).unsqueeze(0);
  const at::Tensor count = at::full({1, 1}, valid, options.dtype(at::kLong));
  const at::Tensor mean = at::where(in_range, log_mel, 0.0).sum(1, /*keepdim=*/true) / count;
  at::Tensor std = at::sqrt(at::where(in_range, log_mel - mean, 0.0).pow(2).sum(1, /*keepdim=*/true) / (count - 1.0));
  std = std.masked_fill(std.isnan(), 0.0) + kNormEpsilon;  // one valid frame: std 0, as NeMo
  at::Tensor out = ((log_mel - mean) / std).masked_fill(in_range.logical_not(), c.pad_value);
  if (c.pad_to > 0 && frames % c.pad_to != 0) {
    out = at::constant_pad_nd(out, {0, c.pad_to - frames % c.pad_to}, c.pad_value);
  }
  IZWI_CHECK(out.size(1) == nemo_log_mel_frames(samples, c), "{} log-mel frames, {} expected", out.size(1),
             nemo_log_mel_frames(samples, c));
  return out;
}

}  // namespace izwi
