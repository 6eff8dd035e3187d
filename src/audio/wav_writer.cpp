#include <sndfile.h>

#include "audio/audio_file.h"
#include "audio/sample_checks.h"
#include "common/check.h"
#include "izwi/audio.h"

namespace izwi {

struct WavWriter::File {
  SNDFILE* handle = nullptr;
};

WavWriter::WavWriter(const std::string& path, int sample_rate, WavFormat format)
    : file_(std::make_unique<File>()), path_(path) {
  check_sample_rate(sample_rate, "sample_rate", "writing audio file '" + path + "'");
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = 1;
  info.format = sndfile_format(wav_file_format(format));
  file_->handle = sf_open(path.c_str(), SFM_WRITE, &info);
  if (file_->handle == nullptr)
    fail(ErrorCode::InvalidArgument, "cannot create audio file '{}': {}", path, sf_strerror(nullptr));
  sf_command(file_->handle, SFC_SET_CLIPPING, nullptr, SF_TRUE);  // 16-bit: clip, not wrap, past +-1
}

WavWriter::~WavWriter() {
  if (file_->handle != nullptr) sf_close(file_->handle);
}

void WavWriter::write(const float* samples, size_t count) {
  if (file_->handle == nullptr) fail(ErrorCode::InvalidArgument, "audio file '{}' is closed", path_);
  if (count == 0) return;
  check_samples(samples, count, "writing audio file '" + path_ + "'");
  const auto n = static_cast<sf_count_t>(count);
  if (sf_writef_float(file_->handle, samples, n) != n) {
    fail(ErrorCode::InvalidArgument, "cannot write audio file '{}': {}", path_, sf_strerror(file_->handle));
  }
}

void WavWriter::close() {
  if (file_->handle == nullptr) return;
  const int status = sf_close(file_->handle);
  file_->handle = nullptr;
  if (status != 0) fail(ErrorCode::InvalidArgument, "cannot finish audio file '{}'", path_);
}

}  // namespace izwi
