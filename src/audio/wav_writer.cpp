#include <sndfile.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "audio/sample_checks.h"
#include "common/check.h"
#include "izwi/audio.h"

namespace izwi {

namespace {

// The float header izwi writes itself: libsndfile's has a 16-byte fmt chunk (no cbSize, which a
// non-PCM WAVEFORMATEX must carry) and its WAVE_FORMAT_EXTENSIBLE one trips sox 14.4's reader too;
// both make sox warn "wave header missing extended part of fmt chunk". This is the layout sox
// itself writes: fmt of 18 bytes (IEEE float, cbSize 0), fact (frame count), data.
constexpr size_t kFloatHeaderBytes = 58;
constexpr long kRiffSizeAt = 4, kFactFramesAt = 46, kDataSizeAt = 54;
constexpr uint64_t kMaxDataBytes = 0xFFFFFFFFull - (kFloatHeaderBytes - 8);  // the RIFF size is 32-bit

void put16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, v & 0xFFFF);
  put16(p + 2, v >> 16);
}

std::array<uint8_t, kFloatHeaderBytes> float_header(int sample_rate, uint32_t frames) {
  std::array<uint8_t, kFloatHeaderBytes> h{};
  uint8_t* p = h.data();
  const uint32_t data_bytes = frames * 4;
  std::memcpy(p, "RIFF", 4);
  put32(p + kRiffSizeAt, static_cast<uint32_t>(kFloatHeaderBytes - 8) + data_bytes);
  std::memcpy(p + 8, "WAVEfmt ", 8);
  put32(p + 16, 18);                                      // fmt chunk size
  put16(p + 20, 3);                                       // WAVE_FORMAT_IEEE_FLOAT
  put16(p + 22, 1);                                       // mono
  put32(p + 24, static_cast<uint32_t>(sample_rate));      // frames per second
  put32(p + 28, static_cast<uint32_t>(sample_rate) * 4);  // bytes per second
  put16(p + 32, 4);                                       // bytes per frame
  put16(p + 34, 32);                                      // bits per sample
  put16(p + 36, 0);                                       // cbSize
  std::memcpy(p + 38, "fact", 4);
  put32(p + 42, 4);
  put32(p + kFactFramesAt, frames);
  std::memcpy(p + 50, "data", 4);
  put32(p + kDataSizeAt, data_bytes);
  return h;
}

}  // namespace

struct WavWriter::File {
  SNDFILE* pcm16 = nullptr;  ///< WavFormat::Pcm16, through libsndfile
  std::FILE* raw = nullptr;  ///< WavFormat::Float32, header written here
  int sample_rate = 0;
  uint64_t frames = 0;
  bool open() const { return pcm16 != nullptr || raw != nullptr; }
};

WavWriter::WavWriter(const std::string& path, int sample_rate, WavFormat format)
    : file_(std::make_unique<File>()), path_(path) {
  check_sample_rate(sample_rate, "sample_rate", "writing audio file '" + path + "'");
  file_->sample_rate = sample_rate;
  if (format == WavFormat::Float32) {
    file_->raw = std::fopen(path.c_str(), "wb");
    if (file_->raw == nullptr) {
      fail(ErrorCode::InvalidArgument, "cannot create audio file '{}': {}", path, std::strerror(errno));
    }
    const auto header = float_header(sample_rate, 0);  // sizes completed by close()
    if (std::fwrite(header.data(), 1, header.size(), file_->raw) != header.size()) {
      fail(ErrorCode::InvalidArgument, "cannot write audio file '{}'", path);
    }
    return;
  }
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = 1;
  info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  file_->pcm16 = sf_open(path.c_str(), SFM_WRITE, &info);
  if (file_->pcm16 == nullptr)
    fail(ErrorCode::InvalidArgument, "cannot create audio file '{}': {}", path, sf_strerror(nullptr));
  sf_command(file_->pcm16, SFC_SET_CLIPPING, nullptr, SF_TRUE);  // clip, not wrap, past +-1
}

WavWriter::~WavWriter() {
  try {
    close();
  } catch (const Error&) {  // a destructor cannot report it; close() does
  }
}

void WavWriter::write(const float* samples, size_t count) {
  if (!file_->open()) fail(ErrorCode::InvalidArgument, "audio file '{}' is closed", path_);
  if (count == 0) return;
  check_samples(samples, count, "writing audio file '" + path_ + "'");
  if (file_->raw != nullptr) {
    if ((file_->frames + count) * 4 > kMaxDataBytes) {
      fail(ErrorCode::ResourceExhausted, "audio file '{}': a WAV holds at most {} float samples", path_,
           kMaxDataBytes / 4);
    }
    if (std::fwrite(samples, sizeof(float), count, file_->raw) != count) {  // little-endian hosts only
      fail(ErrorCode::InvalidArgument, "cannot write audio file '{}'", path_);
    }
    file_->frames += count;
    return;
  }
  const auto n = static_cast<sf_count_t>(count);
  if (sf_writef_float(file_->pcm16, samples, n) != n) {
    fail(ErrorCode::InvalidArgument, "cannot write audio file '{}': {}", path_, sf_strerror(file_->pcm16));
  }
}

void WavWriter::close() {
  if (file_->pcm16 != nullptr) {
    const int status = sf_close(file_->pcm16);
    file_->pcm16 = nullptr;
    if (status != 0) fail(ErrorCode::InvalidArgument, "cannot finish audio file '{}'", path_);
  }
  if (file_->raw != nullptr) {
    std::FILE* raw = file_->raw;
    file_->raw = nullptr;
    const auto header = float_header(file_->sample_rate, static_cast<uint32_t>(file_->frames));
    const bool ok =
        std::fseek(raw, 0, SEEK_SET) == 0 && std::fwrite(header.data(), 1, header.size(), raw) == header.size();
    if (std::fclose(raw) != 0 || !ok) fail(ErrorCode::InvalidArgument, "cannot finish audio file '{}'", path_);
  }
}

}  // namespace izwi
