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
#include "models/streaming_input.h"
#include "sampling/sampling_state.h"
#include "scheduler/sequence.h"

namespace izwi {

using Clock = std::chrono::steady_clock;

struct ActiveRequest {
  std::string id;
  GenerationParams params;
  std::vector<int32_t> eos_ids;
  Sequence seq;
  SamplingState sampling;
  std::shared_ptr<detail::RequestChannel> channel;
  Clock::time_point submitted;
  Clock::time_point first_scheduled;
  Clock::time_point first_token;
  bool scheduled_once = false;
  size_t delivered = 0;  ///< Generated tokens already handed to the channel.
  std::unique_ptr<TextStream> text;  ///< Null when the model folder has no tokenizer.
  size_t text_pushed = 0;            ///< Generated tokens already given to `text`.
  std::string undelivered_text;      ///< Final text not yet handed to the channel.

  // Speech requests: the model's per-request audio input and when generation ends.
  std::unique_ptr<StreamingInput> input;
  bool continue_after_audio = false;
  int32_t max_positions_after_audio = 0;

  /// Positions the scheduler may compute now.
  int32_t input_limit() const;
  /// Positions at which generation ends, or -1 while the audio is still arriving.
  int32_t end_of_audio() const;
  /// Generated tokens that are final. A live speech stream samples a token at the last position
  /// whose audio has arrived; that token belongs to the transcription only if more audio comes
  /// (offline decoding stops before it), so it waits until the audio goes on or ends.
  size_t committed_tokens() const;
  /// Gives the committed tokens not yet seen by `text` to it; their text joins undelivered_text.
  void push_text(size_t upto);
};

}  // namespace izwi
