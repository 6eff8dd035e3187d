#include "models/voxtral_streaming_input.h"

#include "common/check.h"

namespace izwi {

namespace {

LogMelConfig mel_config(const VoxtralAudioEncoder& encoder) {
  LogMelConfig config;
  config.n_mels = static_cast<int>(encoder.mel_bins());
  return config;
}

}  // namespace

VoxtralStreamingInput::VoxtralStreamingInput(const VoxtralAudioEncoder& encoder, const TranscriptionSettings& settings,
                                             int64_t embedding_size, const at::TensorOptions& options)
    : encoder_(encoder),
      settings_(settings),
      mel_(mel_config(encoder), options.device()),  // the frames are computed where the encoder runs
      state_(encoder.make_state()),
      embeddings_(at::zeros({0, embedding_size}, options)) {}

void VoxtralStreamingInput::push_audio(const float* samples, size_t count) {
  audio_pushed_ = true;
  push_mel(mel_.push(samples, count));
}

void VoxtralStreamingInput::finish_audio() {
  // Streams fed mel frames directly never pushed samples: there is no frontend tail to flush.
  if (audio_pushed_) push_mel(mel_.finish());
  finished_ = true;
}

int32_t VoxtralStreamingInput::audio_positions() const {
  return static_cast<int32_t>(mel_frames_ / encoder_.mel_frames_per_embedding());
}

void VoxtralStreamingInput::push_mel(const at::Tensor& frames) {
  IZWI_CHECK(!finished_, "mel frames pushed after the audio finished");
  if (frames.size(1) == 0) return;
  pending_mel_.push_back(frames);
  pending_frames_ += frames.size(1);
  mel_frames_ += frames.size(1);
}

std::optional<VoxtralAudioEncoder::Job> VoxtralStreamingInput::encoding_job(int64_t end) {
  if (std::min<int64_t>(end, audio_positions()) <= embeddings_.size(0)) return std::nullopt;
  // Every pending complete group at once: one encoder pass per step and stream.
  const int64_t per = encoder_.mel_frames_per_embedding();
  const at::Tensor mel = at::cat(pending_mel_, 1);
  const int64_t groups = pending_frames_ / per;
  pending_mel_.assign(1, mel.narrow(1, groups * per, pending_frames_ - groups * per));
  pending_frames_ -= groups * per;
  return VoxtralAudioEncoder::Job{&state_, mel.narrow(1, 0, groups * per)};
}

void VoxtralStreamingInput::complete_encoding(const at::Tensor& embeddings) {
  embeddings_ = at::cat({embeddings_, embeddings.to(embeddings_.scalar_type())}, 0);
}

at::Tensor VoxtralStreamingInput::embeddings(int64_t start, int64_t count, const ForwardContext& ctx) {
  if (std::optional<VoxtralAudioEncoder::Job> job = encoding_job(start + count)) {
    complete_encoding(encoder_.encode(*job->state, job->mel, ctx));
  }
  const int64_t have = std::max<int64_t>(0, std::min(start + count, embeddings_.size(0)) - start);
  IZWI_CHECK(have == count || finished_, "positions [{}, {}) requested before their audio arrived", start,
             start + count);
  if (have == count) return embeddings_.narrow(0, start, count);
  // Past the end of the audio (continuing text-only): zero audio contribution.
  at::Tensor out = at::zeros({count, embeddings_.size(1)}, embeddings_.options());
  if (have > 0) out.narrow(0, 0, have).copy_(embeddings_.narrow(0, start, have));
  return out;
}

}  // namespace izwi
