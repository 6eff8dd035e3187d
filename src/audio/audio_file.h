#pragma once
// Audio files through libsndfile. The public functions (izwi/audio.h: read_audio,
// read_audio_from_memory, write_wav) are defined here, plus writing in the other formats.

#include <string>

#include "izwi/audio.h"

namespace izwi {

enum class AudioFileFormat { Wav, WavPcm16, Flac, OggVorbis, Mp3 };

/// The file format of a public WavFormat.
AudioFileFormat wav_file_format(WavFormat format);

/// libsndfile's SF_INFO format of `format`: float32 WAV (WAVE_FORMAT_EXTENSIBLE, whose fmt chunk
/// sox and other readers expect for float), 16-bit WAV or FLAC, OGG/Vorbis, MP3.
int sndfile_format(AudioFileFormat format);

/// Writes `audio` (any channel count) as float32 or 16-bit WAV, 16-bit FLAC, OGG/Vorbis or MP3
/// (lossy formats at libsndfile's default quality; integer formats clip to [-1, 1]). Throws
/// InvalidArgument naming the file if it cannot.
void write_audio(const std::string& path, const AudioBuffer& audio, AudioFileFormat format);

}  // namespace izwi
