#pragma once
// Decides when a request is done after a token was appended, and builds its Output.

#include "engine/active_request.h"
#include "izwi/output.h"

namespace izwi {

/// FinishReason::None while the request should continue; also ends speech requests once the
/// audio's positions are used.
FinishReason check_finish(const ActiveRequest& request, int32_t token);

/// The Output of a request ending now with `reason`.
Output make_output(const ActiveRequest& request, FinishReason reason, Clock::time_point now);

}  // namespace izwi
