#include "audio/streaming_resampler.h"

#include <soxr.h>

#include <cmath>

#include "audio/sample_checks.h"
#include "common/check.h"

namespace izwi {

void StreamingResampler::SoxrDeleter::operator()(soxr* s) const { soxr_delete(s); }

StreamingResampler::StreamingResampler(int in_rate, int out_rate) : in_rate_(in_rate), out_rate_(out_rate) {
  check_sample_rate(in_rate, "in_rate", "StreamingResampler");
  check_sample_rate(out_rate, "out_rate", "StreamingResampler");
  if (in_rate == out_rate) return;
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  soxr_error_t error = nullptr;
  soxr_.reset(soxr_create(in_rate, out_rate, 1, &error, &io, &quality, nullptr));
  if (error != nullptr) fail(ErrorCode::Internal, "soxr_create({} -> {} Hz): {}", in_rate, out_rate, error);
}

StreamingResampler::~StreamingResampler() = default;

std::vector<float> StreamingResampler::push(const float* samples, size_t count) {
  check_samples(samples, count, "StreamingResampler::push", EmptySamples::Allow);
  if (count == 0) return {};
  check_resampled_length(count, in_rate_, out_rate_, "StreamingResampler::push");
  if (!soxr_) return std::vector<float>(samples, samples + count);
  return process(samples, count);
}

std::vector<float> StreamingResampler::flush() {
  if (!soxr_) return {};
  std::vector<float> tail = process(nullptr, 0);  // null input tells soxr the stream ended
  soxr_clear(soxr_.get());
  return tail;
}

std::vector<float> StreamingResampler::process(const float* samples, size_t count) {
  // Room for this chunk's share of output plus soxr's delay; loop while soxr fills it.
  const size_t room = static_cast<size_t>(std::ceil(static_cast<double>(count) * out_rate_ / in_rate_)) + 1024;
  std::vector<float> out;
  size_t consumed = 0;
  for (;;) {
    const size_t start = out.size();
    out.resize(start + room);
    size_t used = 0, produced = 0;
    const soxr_error_t error = soxr_process(soxr_.get(), samples ? samples + consumed : nullptr, count - consumed,
                                            &used, out.data() + start, room, &produced);
    if (error != nullptr) fail(ErrorCode::Internal, "soxr_process: {}", error);
    consumed += used;
    out.resize(start + produced);
    if (consumed == count && produced < room) return out;
  }
}

std::vector<float> resample(const std::vector<float>& mono, int from_rate, int to_rate) {
  check_samples(mono.data(), mono.size(), "resample");
  check_sample_rate(from_rate, "from_rate", "resample");
  check_sample_rate(to_rate, "to_rate", "resample");
  check_resampled_length(mono.size(), from_rate, to_rate, "resample");
  StreamingResampler resampler(from_rate, to_rate);
  std::vector<float> out = resampler.push(mono.data(), mono.size());
  const std::vector<float> tail = resampler.flush();
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

}  // namespace izwi
