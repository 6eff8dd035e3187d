#include "engine/active_request.h"

#include <algorithm>
#include <limits>

namespace izwi {

int32_t ActiveRequest::input_limit() const {
  if (!takes_audio()) return std::numeric_limits<int32_t>::max();
  if (state->audio_finished() && continue_after_audio) return std::numeric_limits<int32_t>::max();
  return state->audio_positions();
}

size_t ActiveRequest::committed_tokens() const {
  const size_t generated = seq.tokens.size() - static_cast<size_t>(seq.prompt_len);
  if (!takes_audio() || state->audio_finished() || continue_after_audio) return generated;
  return std::min<size_t>(generated, static_cast<size_t>(std::max(0, state->audio_positions() - seq.prompt_len)));
}

void ActiveRequest::append(StepOutput output) {
  seq.tokens.push_back(output.token);
  if (audio_chat) item_is_frame.push_back(!output.codes.empty());
  if (!output.codes.empty()) frames.push_back(std::move(output.codes));
}

std::vector<int32_t> ActiveRequest::reported_tokens(size_t from, size_t to) const {
  const auto generated = seq.tokens.begin() + seq.prompt_len;
  std::vector<int32_t> out(generated + static_cast<ptrdiff_t>(from), generated + static_cast<ptrdiff_t>(to));
  if (!audio_chat) return out;
  size_t frame = static_cast<size_t>(
      std::count(item_is_frame.begin(), item_is_frame.begin() + static_cast<ptrdiff_t>(from), true));
  for (size_t i = from; i < to; ++i) {
    if (item_is_frame[i]) out[i - from] = frames[frame++][0];
  }
  return out;
}

int32_t ActiveRequest::frames_to_decode(bool finishing) const {
  const int32_t pending = static_cast<int32_t>(frames.size()) - frames_decoded;
  if (finishing || pending <= 0) return std::max(0, pending);
  const int32_t chunk = frames_decoded == 0 ? first_chunk_frames : chunk_frames;
  return pending >= chunk ? pending : 0;
}

void ActiveRequest::push_text(size_t upto) {
  for (; text_pushed < upto; ++text_pushed) {
    if (audio_chat && item_is_frame[text_pushed]) continue;  // a frame's token is a code, not text
    undelivered_text += text->push(seq.tokens[static_cast<size_t>(seq.prompt_len) + text_pushed]);
  }
}

int32_t ActiveRequest::end_of_audio() const {
  if (!takes_audio() || !state->audio_finished()) return -1;
  return state->audio_positions() + (continue_after_audio ? max_positions_after_audio : 0);
}

}  // namespace izwi
