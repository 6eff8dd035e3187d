#include "engine/active_request.h"

#include <limits>

namespace izwi {

int32_t ActiveRequest::input_limit() const {
  if (!input) return std::numeric_limits<int32_t>::max();
  if (input->audio_finished() && continue_after_audio) return std::numeric_limits<int32_t>::max();
  return input->audio_positions();
}

int32_t ActiveRequest::end_of_audio() const {
  if (!input || !input->audio_finished()) return -1;
  return input->audio_positions() + (continue_after_audio ? max_positions_after_audio : 0);
}

}  // namespace izwi
