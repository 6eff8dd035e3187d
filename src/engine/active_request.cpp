#include "engine/active_request.h"

#include <algorithm>
#include <limits>

namespace izwi {

int32_t ActiveRequest::input_limit() const {
  if (!input) return std::numeric_limits<int32_t>::max();
  if (input->audio_finished() && continue_after_audio) return std::numeric_limits<int32_t>::max();
  return input->audio_positions();
}

size_t ActiveRequest::committed_tokens() const {
  const size_t generated = seq.tokens.size() - static_cast<size_t>(seq.prompt_len);
  if (!input || input->audio_finished() || continue_after_audio) return generated;
  return std::min<size_t>(generated, static_cast<size_t>(std::max(0, input->audio_positions() - seq.prompt_len)));
}

void ActiveRequest::push_text(size_t upto) {
  for (; text_pushed < upto; ++text_pushed) {
    undelivered_text += text->push(seq.tokens[static_cast<size_t>(seq.prompt_len) + text_pushed]);
  }
}

int32_t ActiveRequest::end_of_audio() const {
  if (!input || !input->audio_finished()) return -1;
  return input->audio_positions() + (continue_after_audio ? max_positions_after_audio : 0);
}

}  // namespace izwi
