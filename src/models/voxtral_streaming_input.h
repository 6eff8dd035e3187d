#pragma once
// One Voxtral Realtime request's audio: samples turned into log-mel frames as they arrive (the
// streaming frontend gives the same frames as the offline one), the encoder state, and
// every audio embedding computed so far (kept so a preempted request can recompute its decoder
// positions without re-running the encoder). One embedding per decoder position.

#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "audio/streaming_log_mel.h"
#include "layers/step/forward_context.h"
#include "layers/step/request_state.h"
#include "models/voxtral_audio_encoder.h"

namespace izwi {

class VoxtralStreamingInput final : public RequestState {
 public:
  VoxtralStreamingInput(const VoxtralAudioEncoder& encoder, const TranscriptionSettings& settings,
                        int64_t embedding_size, const at::TensorOptions& options);

  bool takes_audio() const override { return true; }
  int32_t sample_rate() const override { return 16000; }  // the log-mel frontend's rate
  void push_audio(const float* samples, size_t count) override;
  void finish_audio() override;
  int32_t audio_positions() const override;
  bool audio_finished() const override { return finished_; }

  /// Appends log-mel frames [mel_bins, n] directly (push_audio computes them from samples).
  void push_mel(const at::Tensor& frames);
  /// The encoder work that brings the embeddings up to position `end` (every pending complete group
  /// of mel frames), or std::nullopt when they are there already. The model batches these jobs
  /// across streams and hands each result to complete_encoding().
  std::optional<VoxtralAudioEncoder::Job> encoding_job(int64_t end);
  void complete_encoding(const at::Tensor& embeddings);
  /// Embeddings [count, embedding_size] of positions [start, start + count); encodes pending mel
  /// frames as needed. Positions past the end of finished audio get zeros.
  at::Tensor embeddings(int64_t start, int64_t count, const ForwardContext& ctx);
  int32_t delay_tokens() const { return settings_.delay_tokens; }

 private:
  const VoxtralAudioEncoder& encoder_;
  TranscriptionSettings settings_;
  StreamingLogMel mel_;
  VoxtralAudioEncoder::State state_;
  std::vector<at::Tensor> pending_mel_;  ///< Arrived, not yet encoded.
  int64_t pending_frames_ = 0;
  int64_t mel_frames_ = 0;     ///< Arrived in total.
  at::Tensor embeddings_;      ///< [encoded positions, embedding_size]
  bool audio_pushed_ = false;  ///< Samples came through the frontend (not mel directly).
  bool finished_ = false;
};

}  // namespace izwi
