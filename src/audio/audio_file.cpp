#include "audio/audio_file.h"

#include <sndfile.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>

#include "audio/sample_checks.h"
#include "common/check.h"

namespace izwi {
namespace {

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

// Encoded bytes in memory, read through libsndfile's virtual I/O.
struct MemoryFile {
  const unsigned char* data;
  sf_count_t size;
  sf_count_t position = 0;
};

sf_count_t memory_length(void* user) { return static_cast<MemoryFile*>(user)->size; }

sf_count_t memory_seek(sf_count_t offset, int whence, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? file->position : file->size;
  // Decoders seek with offsets read from the file: clamp to the bytes there (without overflow).
  if (offset < -base) return -1;
  file->position = offset > file->size - base ? file->size : base + offset;
  return file->position;
}

sf_count_t memory_read(void* out, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t n = std::max<sf_count_t>(0, std::min(count, file->size - file->position));
  std::memcpy(out, file->data + file->position, static_cast<size_t>(n));
  file->position += n;
  return n;
}

sf_count_t memory_write(const void*, sf_count_t, void*) { return 0; }

sf_count_t memory_tell(void* user) { return static_cast<MemoryFile*>(user)->position; }

[[noreturn]] void fail_open(const std::string& name) {
  // sf_error(nullptr) reports the last failed sf_open; its text alone can mislead (mpg123 answers
  // "does not exist" for a broken MP3), so the message leads with what izwi concluded.
  const int code = sf_error(nullptr);
  if (code == SF_ERR_UNRECOGNISED_FORMAT) {
    fail(ErrorCode::Unsupported, "audio file '{}' is not in a supported format (WAV, FLAC, OGG/Vorbis, MP3): {}", name,
         sf_strerror(nullptr));
  }
  fail(ErrorCode::InvalidFormat, "audio file '{}' is corrupt or truncated: {}", name, sf_strerror(nullptr));
}

// libsndfile silently shortens a WAV whose data chunk runs past the end of the file, noting only
// "data : <declared> (should be <present>)" in its log. 0xFFFFFFFF is the placeholder size of
// WAVs written to a pipe, not a truncation.
bool wav_data_truncated(SNDFILE* file) {
  char log[16384] = {};
  sf_command(file, SFC_GET_LOG_INFO, log, sizeof(log));
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    long long declared = 0, present = 0;
    if (std::sscanf(line.c_str(), " data : %lld (should be %lld)", &declared, &present) == 2) {
      return declared != 0xFFFFFFFFLL;
    }
  }
  return false;
}

AudioBuffer decode(SNDFILE* file, const SF_INFO& info, const std::string& name) {
  if (info.channels <= 0 || info.samplerate <= 0) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' declares {} channels at {} Hz", name, info.channels,
         info.samplerate);
  }
  // A corrupt rate (1 Hz) would make resampling to the model's rate multiply the samples.
  if (info.samplerate < kMinSampleRate || info.samplerate > kMaxSampleRate) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' declares a sample rate of {} Hz, outside [{}, {}] Hz", name,
         info.samplerate, kMinSampleRate, kMaxSampleRate);
  }
  const auto channels = static_cast<size_t>(info.channels);
  // SF_COUNT_MAX means libsndfile cannot tell, e.g. for an Ogg stream without its end page.
  const bool length_known = info.frames >= 0 && info.frames < SF_COUNT_MAX;
  if (length_known && static_cast<uint64_t>(info.frames) > kMaxAudioSamples / channels) {
    fail(ErrorCode::ResourceExhausted,
         "audio file '{}' declares {} frames of {} channels, above the limit of {} samples", name, info.frames,
         channels, kMaxAudioSamples);
  }
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_WAV && wav_data_truncated(file)) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' is truncated: its data chunk runs past the end of the file", name);
  }
  AudioBuffer audio;
  audio.sample_rate = info.samplerate;
  audio.channels = info.channels;
  // Read in blocks of about 64k samples rather than trusting the declared length (a corrupt header
  // can inflate it, or claim 1024 channels to make each frame large).
  const auto block_frames = static_cast<sf_count_t>(std::max<size_t>(1, (size_t{1} << 16) / channels));
  for (;;) {
    const size_t start = audio.samples.size();
    audio.samples.resize(start + static_cast<size_t>(block_frames) * channels);
    const sf_count_t got = sf_readf_float(file, audio.samples.data() + start, block_frames);
    audio.samples.resize(start + static_cast<size_t>(std::max<sf_count_t>(got, 0)) * channels);
    if (audio.samples.size() > kMaxAudioSamples) {
      fail(ErrorCode::ResourceExhausted, "audio file '{}' holds more than the limit of {} samples", name,
           kMaxAudioSamples);
    }
    if (got < block_frames) break;
  }
  const sf_count_t frames = static_cast<sf_count_t>(audio.frames());
  if (sf_error(file) != SF_ERR_NO_ERROR) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' is corrupt or truncated after {} frames: {}", name, frames,
         sf_strerror(file));
  }
  // MP3 lengths are estimates (without a Xing header, file size over the first frame's bitrate).
  const bool exact_length = length_known && (info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_MPEG;
  if (exact_length && frames < info.frames) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' is truncated: its header declares {} frames, only {} decode", name,
         info.frames, frames);
  }
  if (frames == 0) fail(ErrorCode::InvalidFormat, "audio file '{}' contains no decodable samples", name);
  if (const auto bad = first_unusable_sample(audio.samples.data(), audio.samples.size())) {
    fail(ErrorCode::InvalidFormat, "audio file '{}' holds an unusable sample at frame {}: {}", name, *bad / channels,
         unusable_sample_reason(audio.samples[*bad]));
  }
  return audio;
}

int sndfile_format(AudioFileFormat format) {
  switch (format) {
    case AudioFileFormat::Wav:
      return SF_FORMAT_WAV | SF_FORMAT_FLOAT;
    case AudioFileFormat::Flac:
      return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    case AudioFileFormat::OggVorbis:
      return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
    case AudioFileFormat::Mp3:
      return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
  }
  IZWI_CHECK(false, "unknown AudioFileFormat {}", static_cast<int>(format));
}

}  // namespace

AudioBuffer read_audio(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail(ErrorCode::NotFound, "audio file '{}' does not exist or is not a file", path);
  if (std::filesystem::file_size(path, ec) == 0) fail(ErrorCode::InvalidFormat, "audio file '{}' is empty", path);
  SF_INFO info{};
  SndfilePtr file(sf_open(path.c_str(), SFM_READ, &info));
  if (!file) fail_open(path);
  return decode(file.get(), info, path);
}

AudioBuffer read_audio_from_memory(const void* data, size_t size, const std::string& name) {
  if (size == 0) fail(ErrorCode::InvalidFormat, "audio file '{}' is empty", name);
  if (data == nullptr) fail(ErrorCode::InvalidArgument, "audio file '{}': data is null", name);
  MemoryFile memory{static_cast<const unsigned char*>(data), static_cast<sf_count_t>(size)};
  SF_VIRTUAL_IO io{memory_length, memory_seek, memory_read, memory_write, memory_tell};
  SF_INFO info{};
  SndfilePtr file(sf_open_virtual(&io, SFM_READ, &info, &memory));
  if (!file) fail_open(name);
  return decode(file.get(), info, name);
}

void write_audio(const std::string& path, const AudioBuffer& audio, AudioFileFormat format) {
  check_audio_buffer(audio, fmt::format("writing audio file '{}'", path));
  SF_INFO info{};
  info.samplerate = audio.sample_rate;
  info.channels = audio.channels;
  info.format = sndfile_format(format);
  if (!sf_format_check(&info)) {
    fail(ErrorCode::Unsupported, "writing audio file '{}': libsndfile cannot write this format at {} Hz, {} channels",
         path, audio.sample_rate, audio.channels);
  }
  SndfilePtr file(sf_open(path.c_str(), SFM_WRITE, &info));
  if (!file) fail(ErrorCode::InvalidArgument, "cannot create audio file '{}': {}", path, sf_strerror(nullptr));
  sf_command(file.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);  // integer formats: clip, not wrap, past +-1
  const auto frames = static_cast<sf_count_t>(audio.frames());
  if (sf_writef_float(file.get(), audio.samples.data(), frames) != frames) {
    fail(ErrorCode::InvalidArgument, "cannot write audio file '{}': {}", path, sf_strerror(file.get()));
  }
  if (sf_close(file.release()) != 0) fail(ErrorCode::InvalidArgument, "cannot finish audio file '{}'", path);
}

void write_wav(const std::string& path, const std::vector<float>& mono, int sample_rate, WavFormat format) {
  check_audio_buffer(AudioBuffer{mono, sample_rate, 1}, fmt::format("writing audio file '{}'", path));
  WavWriter wav(path, sample_rate, format);
  wav.write(mono.data(), mono.size());
  wav.close();
}

std::vector<float> load_audio_mono(const std::string& path, int target_rate) {
  check_sample_rate(target_rate, "target_rate", fmt::format("load_audio_mono '{}'", path));
  const AudioBuffer audio = read_audio(path);
  return resample(to_mono(audio), audio.sample_rate, target_rate);
}

}  // namespace izwi
