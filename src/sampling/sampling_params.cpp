#include "sampling/sampling_params.h"

#include <cmath>

#include "common/check.h"

namespace izwi {

void validate_sampling(const SamplingParams& p, const std::string& field) {
  if (p.temperature && (!std::isfinite(*p.temperature) || *p.temperature < 0)) {
    fail(ErrorCode::InvalidArgument, "{}.temperature = {} must be finite and >= 0", field, *p.temperature);
  }
  if (p.top_k && *p.top_k < 0) {
    fail(ErrorCode::InvalidArgument, "{}.top_k = {} must be >= 0", field, *p.top_k);
  }
  if (p.top_p && !(*p.top_p > 0.0f && *p.top_p <= 1.0f)) {
    fail(ErrorCode::InvalidArgument, "{}.top_p = {} must be in (0, 1]", field, *p.top_p);
  }
  if (p.repetition_penalty && (!std::isfinite(*p.repetition_penalty) || *p.repetition_penalty <= 0)) {
    fail(ErrorCode::InvalidArgument, "{}.repetition_penalty = {} must be finite and > 0", field, *p.repetition_penalty);
  }
}

ResolvedSampling resolve_sampling(const SamplingParams& requested, const SamplingParams& model_default) {
  const ResolvedSampling off;
  ResolvedSampling r;
  r.temperature = requested.temperature.value_or(model_default.temperature.value_or(off.temperature));
  r.top_k = requested.top_k.value_or(model_default.top_k.value_or(off.top_k));
  r.top_p = requested.top_p.value_or(model_default.top_p.value_or(off.top_p));
  r.repetition_penalty =
      requested.repetition_penalty.value_or(model_default.repetition_penalty.value_or(off.repetition_penalty));
  if (r.top_k == 1) r.temperature = 0.0f;
  return r;
}

}  // namespace izwi
