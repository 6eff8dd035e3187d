#include "models/lfm2_audio/lfm2_audio_request_state.h"

#include "common/check.h"

namespace izwi {

Lfm2AudioRequestState::Lfm2AudioRequestState(Lfm2AudioPrompt prompt, Lfm2AudioGeneration mode, int32_t n_text)
    : mode(mode), modality_left(n_text), prompt_(std::move(prompt)) {
  int32_t text = 0, audio_in = 0, audio_out = 0;
  for (const Lfm2AudioModality m : prompt_.modality) {
    switch (m) {
      case Lfm2AudioModality::kText:
        index_.push_back(text++);
        break;
      case Lfm2AudioModality::kAudioIn:
        index_.push_back(audio_in++);
        break;
      case Lfm2AudioModality::kAudioOut:
        index_.push_back(audio_out++);
        break;
      default:
        fail(ErrorCode::InvalidArgument, "prompt modality {} is not text (1), audio in (2) or audio out (3)",
             static_cast<int32_t>(m));
    }
  }
  if (text != static_cast<int32_t>(prompt_.text_ids.size())) {
    fail(ErrorCode::InvalidArgument, "the prompt has {} text positions but {} text ids", text, prompt_.text_ids.size());
  }
  const int64_t audio_rows = prompt_.audio_in.defined() ? prompt_.audio_in.size(0) : 0;
  if (audio_in != audio_rows) {
    fail(ErrorCode::InvalidArgument, "the prompt has {} audio-in positions but {} audio embeddings", audio_in,
         audio_rows);
  }
  if (audio_out != static_cast<int32_t>(prompt_.audio_out.size())) {
    fail(ErrorCode::InvalidArgument, "the prompt has {} audio-out positions but {} frames", audio_out,
         prompt_.audio_out.size());
  }
  if (prompt_.modality.empty()) fail(ErrorCode::InvalidArgument, "the prompt is empty");
}

}  // namespace izwi
