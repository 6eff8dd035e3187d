#pragma once
// Audio files through libsndfile. The public functions (izwi/audio.h: read_audio,
// read_audio_from_memory, write_wav) are defined here, plus writing in the other formats.

#include <string>

#include "izwi/audio.h"

namespace izwi {

enum class AudioFileFormat { Wav, Flac, OggVorbis, Mp3 };

/// Writes `audio` (any channel count) as float32 WAV, 16-bit FLAC, OGG/Vorbis or MP3 (lossy
/// formats at libsndfile's default quality; FLAC clips to [-1, 1]). Throws InvalidArgument naming
/// the file if it cannot. Mono WAV output for users goes through WavWriter (write_wav).
void write_audio(const std::string& path, const AudioBuffer& audio, AudioFileFormat format);

}  // namespace izwi
