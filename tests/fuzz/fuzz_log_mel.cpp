// Fuzz target: the audio front end on arbitrary samples (NaN and inf included), rates and chunk
// sizes: izwi::resample, the streaming resampler pushed in random chunks, log_mel_spectrogram
// with a random (bounded) config, and the streaming log-mel pushed in random chunks. Each either
// gives a result of the documented size (streamed equal to offline, finite for finite input in
// [-1, 1]) or raises izwi::Error. Sizes are bounded (64k samples, 1M resampled, about 8M log-mel
// values) so a run is fast.

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "audio/log_mel.h"
#include "audio/streaming_log_mel.h"
#include "audio/streaming_resampler.h"
#include "fuzz_support.h"
#include "izwi/audio.h"
#include "izwi/errors.h"

namespace {

constexpr size_t kMaxSamples = 64 * 1024;
constexpr double kMaxResampled = 1 << 20;

int pick_rate(izwi::fuzz::Bytes& in) {
  static const int kRates[] = {16000, 8000, 11025, 22050, 24000, 44100, 48000, 96000, 1, 0, -16000};
  const uint8_t b = in.byte();
  return b < 200 ? kRates[b % 11] : in.special_int();
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

// Chunk sizes from the bytes: 0 .. 4095 samples, 0 included.
size_t next_chunk(izwi::fuzz::Bytes& in) { return in.take<uint16_t>() % 4096; }

void fuzz_resample(izwi::fuzz::Bytes& in, const std::vector<float>& samples, bool in_unit_range, int from, int to) {
  if (from > 0 && to > 0 && static_cast<double>(samples.size()) * to / from > kMaxResampled) return;
  std::vector<float> offline;
  bool offline_ok = false;
  try {
    offline = izwi::resample(samples, from, to);
    offline_ok = true;
    if (from == to && offline != samples) std::abort();  // equal rates must pass samples through
    const double expected = static_cast<double>(samples.size()) * to / from;
    if (std::abs(static_cast<double>(offline.size()) - expected) > 2.0 + expected * 1e-6) std::abort();
    if (in_unit_range && !all_finite(offline)) std::abort();
  } catch (const izwi::Error&) {
  }
  try {
    izwi::StreamingResampler stream(from, to);
    std::vector<float> streamed;
    size_t pos = 0;
    while (pos < samples.size()) {
      const size_t n = std::min(next_chunk(in), samples.size() - pos);
      const std::vector<float> out = stream.push(samples.data() + pos, n);
      streamed.insert(streamed.end(), out.begin(), out.end());
      pos += n;
      if (n == 0 && in.remaining() == 0) break;  // input exhausted: the rest in one push below
    }
    if (pos < samples.size()) {
      const std::vector<float> out = stream.push(samples.data() + pos, samples.size() - pos);
      streamed.insert(streamed.end(), out.begin(), out.end());
    }
    const std::vector<float> tail = stream.flush();
    streamed.insert(streamed.end(), tail.begin(), tail.end());
    if (offline_ok && in_unit_range) {
      if (streamed.size() != offline.size()) std::abort();  // streaming must equal converting at once
      for (size_t i = 0; i < streamed.size(); ++i) {
        if (std::abs(streamed[i] - offline[i]) > 1e-4f) std::abort();
      }
    }
  } catch (const izwi::Error&) {
  }
}

void fuzz_log_mel(izwi::fuzz::Bytes& in, std::vector<float> samples, bool finite, const izwi::LogMelConfig& config) {
  // Work grows with frames x (n_fft + n_mels): a hop of 1 with n_fft 2048 over 64k samples takes
  // 1.5 GB and 40 s. Keep it near 8M values by shortening the waveform.
  if (config.hop > 0 && config.n_fft > 0 && config.n_mels > 0) {
    const size_t per_frame = static_cast<size_t>(config.n_fft) + static_cast<size_t>(config.n_mels);
    const size_t max_samples = std::max<size_t>(1, (size_t{1} << 23) / per_frame) * static_cast<size_t>(config.hop);
    if (samples.size() > max_samples) samples.resize(max_samples);
  }
  at::Tensor offline;
  try {
    const at::Tensor waveform =
        at::from_blob(const_cast<float*>(samples.data()), {static_cast<int64_t>(samples.size())}, at::kFloat);
    offline = izwi::log_mel_spectrogram(waveform, config);
    // The centred STFT's frames (n_fft / 2 padding each side) minus the last: samples / hop for
    // an even n_fft, one fewer when an odd n_fft and a hop divide the length (as torch.stft).
    const int64_t half = config.n_fft / 2;
    const int64_t frames = (static_cast<int64_t>(samples.size()) + 2 * half - config.n_fft) / config.hop;
    if (offline.dim() != 2 || offline.size(0) != config.n_mels || offline.size(1) != frames) std::abort();
    if (finite && !at::isfinite(offline).all().item<bool>()) std::abort();
  } catch (const izwi::Error&) {
  }
  try {
    izwi::StreamingLogMel stream(config);
    std::vector<at::Tensor> parts;
    size_t pos = 0;
    while (pos < samples.size()) {
      size_t n = std::min(next_chunk(in), samples.size() - pos);
      if (in.remaining() == 0) n = samples.size() - pos;
      parts.push_back(stream.push(samples.data() + pos, n));
      pos += n;
    }
    parts.push_back(stream.finish());
    const at::Tensor streamed = at::cat(parts, 1);
    if (offline.defined()) {
      if (!streamed.sizes().equals(offline.sizes())) std::abort();  // streaming must equal offline
      if (finite && !at::allclose(streamed, offline, 1e-4, 1e-4)) std::abort();
    }
  } catch (const izwi::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  izwi::fuzz::Bytes in(data, size);
  const uint8_t mode = in.byte() % 3;  // 0: int16 in [-1, 1]; 1: raw float bits; 2: int16 with specials
  const size_t repeat = 1 + in.byte() % 32;
  const size_t count = std::min<size_t>(in.take<uint16_t>(), kMaxSamples);
  const int from = pick_rate(in), to = pick_rate(in);
  izwi::LogMelConfig config;
  if (in.byte() >= 192) {  // a random small config; the default (Voxtral's) otherwise
    config.n_fft = static_cast<int>(in.range(-2, 2048));
    config.hop = static_cast<int>(in.range(-2, 1024));
    config.n_mels = static_cast<int>(in.range(-2, 256));
    config.sample_rate = static_cast<int>(in.range(-1, 48000));
  }
  std::vector<float> samples;
  samples.reserve(count);
  for (size_t i = 0; i < count && in.remaining() > 0; ++i) {
    if (mode == 1) {
      samples.push_back(in.take<float>());
    } else if (mode == 2 && in.byte() == 0xff) {
      samples.push_back(in.special_float());
    } else {
      samples.push_back(static_cast<float>(in.take<int16_t>()) / 32768.0f);
    }
  }
  // Tile the samples to reach long inputs from short fuzz inputs, within the bound.
  const size_t base = samples.size();
  for (size_t r = 1; r < repeat && samples.size() + base <= kMaxSamples; ++r) {
    samples.insert(samples.end(), samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(base));
  }
  const bool finite = all_finite(samples);
  bool unit = finite;
  for (float x : samples) unit = unit && std::abs(x) <= 1.0f;
  // Chunk sizes come from the bytes after the samples.
  fuzz_resample(in, samples, unit, from, to);
  fuzz_log_mel(in, samples, unit, config);
  return 0;
}
