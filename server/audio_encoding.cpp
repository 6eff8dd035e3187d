#include "server/audio_encoding.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/enum_names.h"
#include "server/api_error.h"

namespace izwi::server {

namespace {

// OpenAI's response_format names of the speech endpoint's formats (the first three).
constexpr EnumName<AudioFormat> kAudioFormatNames[] = {
    {AudioFormat::Wav, "wav"}, {AudioFormat::Flac, "flac"}, {AudioFormat::Pcm, "pcm"}};
static_assert(enum_names_in_order(kAudioFormatNames));
constexpr EnumName<AudioFormat> kContentTypes[] = {{AudioFormat::Wav, "audio/wav"},
                                                   {AudioFormat::Flac, "audio/flac"},
                                                   {AudioFormat::Pcm, "audio/pcm"},
                                                   {AudioFormat::Mp3, "audio/mpeg"},
                                                   {AudioFormat::Opus, "audio/ogg"}};
static_assert(enum_names_in_order(kContentTypes));

/// libsndfile's virtual I/O over a growing string.
struct MemoryFile {
  std::string bytes;
  sf_count_t position = 0;
};

sf_count_t vio_length(void* user) { return static_cast<sf_count_t>(static_cast<MemoryFile*>(user)->bytes.size()); }

sf_count_t vio_seek(sf_count_t offset, int whence, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? file->position : vio_length(user);
  file->position = std::max<sf_count_t>(0, base + offset);
  return file->position;
}

sf_count_t vio_read(void* out, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t available = std::max<sf_count_t>(0, vio_length(user) - file->position);
  const sf_count_t n = std::min(count, available);
  std::memcpy(out, file->bytes.data() + file->position, static_cast<size_t>(n));
  file->position += n;
  return n;
}

sf_count_t vio_write(const void* in, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const size_t end = static_cast<size_t>(file->position + count);
  if (file->bytes.size() < end) file->bytes.resize(end);
  std::memcpy(file->bytes.data() + file->position, in, static_cast<size_t>(count));
  file->position += count;
  return count;
}

sf_count_t vio_tell(void* user) { return static_cast<MemoryFile*>(user)->position; }

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_u16(std::string& out, uint16_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>(v >> 8);
}

}  // namespace

AudioFormat parse_audio_format(const std::string& name) {
  if (const auto format = enum_from_name(kAudioFormatNames, name)) return *format;
  bad_param("response_format", "'response_format' = '{}' is not supported; use wav, flac or pcm", name);
}

const char* content_type(AudioFormat format) { return enum_name(kContentTypes, format, "audio/pcm"); }

std::string pcm16(const float* samples, size_t count) {
  std::string out;
  out.reserve(count * 2);
  for (size_t i = 0; i < count; ++i) {
    const float clipped = std::clamp(samples[i], -1.0f, 1.0f);
    put_u16(out, static_cast<uint16_t>(static_cast<int16_t>(std::lrint(clipped * 32767.0f))));
  }
  return out;
}

std::string encode_audio(const std::vector<float>& mono, int32_t sample_rate, AudioFormat format) {
  if (format == AudioFormat::Pcm) return pcm16(mono.data(), mono.size());
  SF_VIRTUAL_IO io{vio_length, vio_seek, vio_read, vio_write, vio_tell};
  MemoryFile file;
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = 1;
  switch (format) {
    case AudioFormat::Mp3:
      info.format = SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
      break;
    case AudioFormat::Opus:
      info.format = SF_FORMAT_OGG | SF_FORMAT_OPUS;  // Ogg Opus, as OpenAI's "opus"
      break;
    default:
      info.format = (format == AudioFormat::Wav ? SF_FORMAT_WAV : SF_FORMAT_FLAC) | SF_FORMAT_PCM_16;
  }
  SNDFILE* sf = sf_open_virtual(&io, SFM_WRITE, &info, &file);
  if (sf == nullptr) throw ApiError(500, std::string("libsndfile: ") + sf_strerror(nullptr), {}, "internal_error");
  sf_command(sf, SFC_SET_CLIPPING, nullptr, SF_TRUE);  // 16-bit: clip past +-1 (as pcm16), not wrap
  const sf_count_t written = sf_writef_float(sf, mono.data(), static_cast<sf_count_t>(mono.size()));
  sf_close(sf);
  if (written != static_cast<sf_count_t>(mono.size())) {
    throw ApiError(500, "libsndfile wrote fewer samples than given", {}, "internal_error");
  }
  return file.bytes;
}

std::string streaming_wav_header(int32_t sample_rate) {
  std::string h = "RIFF";
  put_u32(h, 0xffffffffu);
  h += "WAVEfmt ";
  put_u32(h, 16);
  put_u16(h, 1);  // PCM
  put_u16(h, 1);  // mono
  put_u32(h, static_cast<uint32_t>(sample_rate));
  put_u32(h, static_cast<uint32_t>(sample_rate) * 2);
  put_u16(h, 2);
  put_u16(h, 16);
  h += "data";
  put_u32(h, 0xffffffffu);
  return h;
}

}  // namespace izwi::server
