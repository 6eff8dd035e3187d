#include "engine/output_processor.h"

#include <algorithm>

#include "sampling/token_constraint.h"

namespace izwi {

namespace {

bool contains(const std::vector<int32_t>& ids, int32_t token) {
  return std::find(ids.begin(), ids.end(), token) != ids.end();
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

FinishReason check_finish(const ActiveRequest& r, int32_t token) {
  const int32_t generated = r.seq.num_generated();
  // An audio chat frame's token is a code: it never ends the request as an id would.
  const bool frame = r.audio_chat && !r.item_is_frame.empty() && r.item_is_frame.back();
  // A structured output whose document is complete, with nothing allowed after it, ends at its
  // EOS or stop id even below min_tokens (the sampler let the end through).
  const bool must_end = r.sampling.constraint != nullptr && r.sampling.constraint->must_end();
  if ((generated >= r.params.min_tokens || must_end) && !frame) {
    if (!r.params.ignore_eos && contains(r.eos_ids, token)) return FinishReason::Eos;
    if (contains(r.params.stop_token_ids, token)) return FinishReason::Stop;
  }
  if (generated >= r.params.max_tokens) return FinishReason::Length;
  const int32_t end = r.end_of_audio();
  if (end >= 0 && static_cast<int32_t>(r.seq.tokens.size()) >= end) return FinishReason::Length;
  return FinishReason::None;
}

Output make_output(const ActiveRequest& r, FinishReason reason, Clock::time_point now) {
  Output out;
  out.request_id = r.id;
  out.tokens = r.reported_tokens(0, r.seq.tokens.size() - static_cast<size_t>(r.seq.prompt_len));
  if (r.text) out.text = r.text->text();
  if (r.produces_audio()) {
    out.audio = r.audio;  // all of it for a unary request; streams had theirs chunk by chunk
    out.sample_rate = r.output_sample_rate;
  }
  out.audio_codes = r.frames;
  out.item_is_frame = r.item_is_frame;
  out.finish_reason = reason;
  out.timings.total_ms = ms_between(r.submitted, now);
  out.timings.queue_ms = r.scheduled_once ? ms_between(r.submitted, r.first_scheduled) : out.timings.total_ms;
  out.timings.ttft_ms = out.tokens.empty() ? out.timings.total_ms : ms_between(r.submitted, r.first_token);
  out.prefix_cache_hit_tokens = r.seq.prefix_hit_tokens;
  out.num_preemptions = r.seq.num_preemptions;
  out.logprobs = r.sampling.logprobs_out;
  if (out.logprobs.size() > out.tokens.size())
    out.logprobs.resize(out.tokens.size());  // a token dropped at the end of audio
  out.prompt_logprobs = r.sampling.prompt_logprobs_out;
  out.index = r.choice;
  return out;
}

}  // namespace izwi
