#include "layers/step/request_state.h"

#include "common/check.h"

namespace izwi {

void RequestState::push_audio(const float*, size_t) { fail(ErrorCode::Unsupported, "this request takes no audio"); }

void RequestState::finish_audio() { fail(ErrorCode::Unsupported, "this request takes no audio"); }

}  // namespace izwi
