#pragma once
// Everything the worker thread tracks for one live request.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/request_channel.h"
#include "engine/text_stream.h"
#include "izwi/request.h"
#include "layers/step/request_state.h"
#include "layers/step/sampling_state.h"
#include "layers/step/step_output.h"
#include "scheduler/sequence.h"

namespace izwi {

using Clock = std::chrono::steady_clock;

struct ActiveRequest {
  std::string id;      ///< Request::id; the choices of one request (GenerationParams::n) share it.
  int32_t choice = 0;  ///< Which of the request's choices this is.
  /// A choice waiting for choice 0's prefill, out of the scheduler (EngineCore::add).
  bool held = false;
  GenerationParams params;
  std::vector<int32_t> eos_ids;
  Sequence seq;
  SamplingState sampling;
  std::shared_ptr<detail::RequestChannel> channel;
  Clock::time_point submitted;
  Clock::time_point first_scheduled;
  Clock::time_point first_token;
  bool scheduled_once = false;
  /// Last time the request computed positions or received audio (live streams' idle time).
  Clock::time_point last_active;
  /// A live stream parked while waiting for audio: out of the scheduler, no KV blocks; it is queued
  /// again once it has positions past `parked_computed` (the positions it had computed).
  bool parked = false;
  int32_t parked_computed = 0;
  size_t delivered = 0;                    ///< Generated tokens already handed to the channel.
  bool prompt_logprobs_delivered = false;  ///< SamplingState::prompt_logprobs_out went out in a chunk.
  std::unique_ptr<TextStream> text;        ///< Null when the model folder has no tokenizer.
  size_t text_pushed = 0;                  ///< Generated tokens already given to `text`.
  std::string undelivered_text;            ///< Final text not yet handed to the channel.

  /// The model's state for this request (audio in or out); null for plain text requests.
  std::unique_ptr<RequestState> state;
  // Speech recognition: when generation ends.
  bool continue_after_audio = false;
  int32_t max_positions_after_audio = 0;
  // Speech synthesis: frames sampled so far, how many are decoded, PCM not yet delivered (a
  // unary request keeps all of it for its Output), and the streaming chunk sizes.
  std::vector<std::vector<int32_t>> frames;
  /// Audio chat: its items are text tokens and frames in one stream; per generated item, whether
  /// it is a frame (its token is then codebook 0, not text).
  bool audio_chat = false;
  std::vector<bool> item_is_frame;
  size_t frames_delivered = 0;
  int32_t frames_decoded = 0;
  std::vector<float> audio;
  int32_t first_chunk_frames = 1;
  int32_t chunk_frames = 1;
  int32_t output_sample_rate = 0;

  bool takes_audio() const { return state && state->takes_audio(); }
  bool produces_audio() const { return state && state->produces_audio(); }
  /// Records one step output: the token, and the frame when it carries one.
  void append(StepOutput output);
  /// Frames to decode after this step: all pending ones when `finishing`, else a whole chunk or none.
  int32_t frames_to_decode(bool finishing) const;

  /// Positions the scheduler may compute now.
  int32_t input_limit() const;
  /// Positions at which generation ends, or -1 while the audio is still arriving.
  int32_t end_of_audio() const;
  /// Generated tokens that are final. A live speech stream samples a token at the last position
  /// whose audio has arrived; that token belongs to the transcription only if more audio comes
  /// (offline decoding stops before it), so it waits until the audio goes on or ends.
  size_t committed_tokens() const;
  /// Generated tokens [from, to) as callers see them: an audio chat frame's key is reported as its
  /// codebook 0.
  std::vector<int32_t> reported_tokens(size_t from, size_t to) const;
  /// Gives the committed tokens not yet seen by `text` to it; their text joins undelivered_text.
  void push_text(size_t upto);
};

}  // namespace izwi
