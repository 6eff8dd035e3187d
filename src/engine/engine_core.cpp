#include "engine/engine_core.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "common/check.h"
#include "common/logging.h"
#include "common/op_profile.h"
#include "engine/output_processor.h"

namespace izwi {

namespace {

SchedulerConfig scheduler_config(const EngineConfig& c) {
  SchedulerConfig s;
  s.max_batch_size = c.max_batch_size;
  s.max_tokens_per_step = c.max_tokens_per_step;
  s.enable_chunked_prefill = c.enable_chunked_prefill;
  s.enable_preemption = c.enable_preemption;
  s.policy = c.policy;
  return s;
}

}  // namespace

EngineCore::EngineCore(std::unique_ptr<ModelExecutor> executor, const EngineConfig& config, MetricsCollector& metrics,
                       std::function<void(const std::string&)> on_done)
    : executor_(std::move(executor)),
      cache_(config.num_kv_blocks, config.block_size, config.enable_prefix_cache,
             executor_->spec().needs_state_slots ? config.max_batch_size : 0),
      scheduler_(scheduler_config(config), cache_),
      metrics_(metrics),
      on_done_(std::move(on_done)),
      max_batch_size_(config.max_batch_size),
      stream_idle_timeout_(std::chrono::milliseconds(config.stream_idle_timeout_ms)) {
  executor_->allocate_cache(config.num_kv_blocks, config.block_size,
                            executor_->spec().needs_state_slots ? config.max_batch_size : 0);
  record_queues();
}

void EngineCore::add(std::unique_ptr<ActiveRequest> request) {
  ActiveRequest& r = *request;
  r.seq.id = next_seq_id_;
  r.seq.arrival = next_seq_id_;
  ++next_seq_id_;
  r.sampling.history = &r.seq.tokens;
  // Prompt logprobs need every prompt position's logits: nothing from (or for) the prefix cache.
  if (r.sampling.prompt_logprobs >= 0) r.seq.cacheable_len = 0;
  r.last_active = Clock::now();
  by_seq_[r.seq.id] = &r;
  if (!hold_for_first_choice(r)) scheduler_.add(&r.seq);
  requests_.emplace(r.id, std::move(request));
  record_queues();
}

bool EngineCore::hold_for_first_choice(ActiveRequest& r) {
  if (r.choice == 0 || !cache_.prefix_cache_enabled()) return false;
  // Nothing to share: the prompt fills no block before its last token (always computed), or
  // its positions bypass the cache.
  const int32_t shareable = std::min(r.seq.prompt_len - 1, r.seq.cacheable_len);
  if (shareable < cache_.block_size()) return false;
  const auto [first, last] = requests_.equal_range(r.id);
  for (auto it = first; it != last; ++it) {
    const Sequence& lead = it->second->seq;
    if (it->second->choice != 0 || lead.num_computed >= lead.prompt_len) continue;
    r.held = true;
    held_[lead.id].push_back(&r);
    ++num_held_;
    return true;
  }
  return false;  // choice 0 is gone or past its prefill
}

void EngineCore::release_held(uint64_t first_choice_seq) {
  const auto it = held_.find(first_choice_seq);
  if (it == held_.end()) return;
  for (ActiveRequest* r : it->second) {
    r->held = false;
    --num_held_;
    scheduler_.add(&r->seq);
  }
  held_.erase(it);
}

void EngineCore::abort(const std::string& id) {
  std::vector<ActiveRequest*> choices;
  const auto [first, last] = requests_.equal_range(id);
  for (auto it = first; it != last; ++it) choices.push_back(it->second.get());
  for (ActiveRequest* r : choices) finish(*r, FinishReason::Abort);
}

const ActiveRequest* EngineCore::find(const std::string& id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : it->second.get();
}

void EngineCore::abort_all() {
  std::vector<std::string> ids;
  for (const auto& [id, request] : requests_) ids.push_back(id);
  for (const std::string& id : ids) abort(id);
}

void EngineCore::push_audio(const std::string& id, const std::vector<float>& samples) {
  auto it = requests_.find(id);
  if (it == requests_.end() || !it->second->takes_audio()) return;
  ActiveRequest& r = *it->second;
  try {
    r.state->push_audio(samples.data(), samples.size());
  } catch (const Error& e) {
    fail(r, e);
    return;
  }
  r.seq.input_limit = r.input_limit();
  r.last_active = Clock::now();
  unpark_if_runnable(r);
  advance(r);  // tokens that waited for this audio are final now
}

void EngineCore::finish_audio(const std::string& id) {
  auto it = requests_.find(id);
  if (it == requests_.end() || !it->second->takes_audio()) return;
  ActiveRequest& r = *it->second;
  try {
    r.state->finish_audio();  // flushes the frontend: audio too short for one frame fails here
  } catch (const Error& e) {
    fail(r, e);
    return;
  }
  r.seq.input_limit = r.input_limit();
  r.last_active = Clock::now();
  // Audio shorter than the prompt (or already fully decoded) ends the request now.
  const int32_t end = r.end_of_audio();
  if (static_cast<int32_t>(r.seq.tokens.size()) >= end) {
    finish(r, FinishReason::Length);
  } else {
    unpark_if_runnable(r);  // continue_after_audio lifts the input limit
    advance(r);             // a token that waited for more audio is final now
  }
}

void EngineCore::fail_all(const Error& error) {
  std::vector<std::string> ids;
  for (const auto& [id, request] : requests_) ids.push_back(id);
  for (const std::string& id : ids) {
    auto it = requests_.find(id);
    if (it != requests_.end()) fail(*it->second, error);
  }
}

bool EngineCore::step() {
  park_idle_streams(Clock::now());
  ScheduleResult plan = scheduler_.schedule();
  for (Sequence* seq : plan.unfittable) {
    ActiveRequest& r = *by_seq_.at(seq->id);
    fail(r, Error(ErrorCode::ResourceExhausted,
                  "request '" + r.id + "': " + std::to_string(seq->num_computed) +
                      " positions plus the next ones need more KV blocks than num_kv_blocks holds"));
  }
  if (plan.stalled_on_memory) {
    fail_stalled();
    return true;
  }
  if (plan.scheduled.empty()) {
    metrics_.record_step(0, static_cast<int32_t>(plan.preempted.size()));
    return !plan.preempted.empty() || !plan.unfittable.empty();
  }

  const Clock::time_point start = Clock::now();
  StepBatch batch;
  batch.block_copies = plan.block_copies;
  for (const ScheduledSequence& s : plan.scheduled) {
    ActiveRequest& r = *by_seq_.at(s.seq->id);
    if (!r.scheduled_once) {
      r.scheduled_once = true;
      r.first_scheduled = start;
      metrics_.record_admission(r.seq.prompt_len, r.seq.prefix_hit_tokens);
    }
    r.last_active = start;
    StepSequence step;
    step.seq_id = s.seq->id;
    step.start_pos = s.seq->num_computed;
    step.num_tokens = s.num_tokens;
    step.token_ids = s.seq->tokens.data() + s.seq->num_computed;
    step.block_table = &cache_.block_table(s.seq->id);
    step.state_slot = cache_.state_slot(s.seq->id);
    step.fresh_state = s.seq->fresh_state;
    step.restore_block = s.seq->restore_block;
    step.sampling = s.sample ? &r.sampling : nullptr;
    step.state = r.state.get();
    if (r.sampling.prompt_logprobs >= 0 &&
        static_cast<int32_t>(r.sampling.prompt_logprobs_out.size()) < r.seq.prompt_len - 1) {
      step.scoring = &r.sampling;
      step.prompt_len = r.seq.prompt_len;
    }
    batch.seqs.push_back(step);
  }

  int64_t batch_tokens = 0;
  for (const StepSequence& s : batch.seqs) batch_tokens += s.num_tokens;
  // Ends before the outputs are handed over, so a caller woken by them sees this step recorded.
  std::optional<OpTimer> step_timer(std::in_place, ProfiledOp::Step, batch_tokens);
  std::vector<StepOutput> outputs;
  try {
    outputs = executor_->execute(batch);
  } catch (const std::exception& e) {
    // The batch's sequences may hold half-written cache state: fail them, keep the rest.
    logger()->error("model step failed: {}", e.what());
    for (const ScheduledSequence& s : plan.scheduled) {
      fail(*by_seq_.at(s.seq->id), Error(ErrorCode::Internal, std::string("model step failed: ") + e.what()));
    }
    return true;
  }
  scheduler_.complete(plan);
  for (const ScheduledSequence& s : plan.scheduled) {
    if (s.seq->num_computed >= s.seq->prompt_len) release_held(s.seq->id);  // its prompt is in the cache now
  }

  // Record everything before any caller is woken, so metrics() right after generate() is current.
  const Clock::time_point now = Clock::now();
  std::vector<ActiveRequest*> sampled_requests;
  for (const ScheduledSequence& s : plan.scheduled) {
    if (!s.sample) continue;
    ActiveRequest& r = *by_seq_.at(s.seq->id);
    if (r.params.max_tokens == 0) {
      r.sampling.logprobs_out.clear();  // prompt scoring only: the token sampled after the prompt is dropped
    } else {
      r.append(std::move(outputs.at(sampled_requests.size())));
    }
    r.sampling.num_generated = r.seq.num_generated();
    if (r.seq.num_generated() == 1) r.first_token = now;
    sampled_requests.push_back(&r);
  }
  metrics_.record_step(static_cast<int32_t>(sampled_requests.size()), static_cast<int32_t>(plan.preempted.size()));
  std::vector<FinishReason> reasons;
  for (ActiveRequest* r : sampled_requests) {
    reasons.push_back(r->params.max_tokens == 0 ? FinishReason::Length : check_finish(*r, r->seq.tokens.back()));
  }
  if (!decode_audio(sampled_requests, reasons)) return true;
  step_timer.reset();
  for (size_t i = 0; i < sampled_requests.size(); ++i) {
    if (reasons[i] != FinishReason::None) {
      finish(*sampled_requests[i], reasons[i]);
    } else {
      advance(*sampled_requests[i]);
    }
  }
  record_queues();
#ifndef NDEBUG
  if (requests_.empty()) {
    const std::string problem = check_invariants();
    if (!problem.empty()) logger()->error("engine idle with broken invariant: {}", problem);
    assert(problem.empty());
  }
#endif
  return true;
}

bool EngineCore::decode_audio(const std::vector<ActiveRequest*>& requests, const std::vector<FinishReason>& reasons) {
  // The codec decodes the new frames of every request that has a whole chunk (or is ending), in
  // one batched call per step; each request's decoder state makes the chunks exact.
  std::vector<ActiveRequest*> jobs;
  std::vector<RequestState*> states;
  std::vector<int32_t> counts;
  for (size_t i = 0; i < requests.size(); ++i) {
    ActiveRequest& r = *requests[i];
    if (!r.produces_audio()) continue;
    const int32_t n = r.frames_to_decode(reasons[i] != FinishReason::None);
    if (n == 0) continue;
    jobs.push_back(&r);
    states.push_back(r.state.get());
    counts.push_back(n);
  }
  if (jobs.empty()) return true;
  std::vector<std::vector<float>> pcm;
  try {
    const OpTimer timer(ProfiledOp::AudioDecode, static_cast<int64_t>(jobs.size()));
    const AudioDecoder* decoder = executor_->model().capabilities().audio_decoder;
    IZWI_CHECK(decoder != nullptr, "a request produces audio but the model has no AudioDecoder");
    pcm = decoder->decode_audio(states, counts);
  } catch (const std::exception& e) {
    logger()->error("audio decode failed: {}", e.what());
    for (ActiveRequest* r : jobs) fail(*r, Error(ErrorCode::Internal, std::string("audio decode failed: ") + e.what()));
    // Requests of this step that did not decode are still live: deliver what they have.
    for (size_t i = 0; i < requests.size(); ++i) {
      if (std::find(jobs.begin(), jobs.end(), requests[i]) != jobs.end()) continue;
      reasons[i] != FinishReason::None ? finish(*requests[i], reasons[i]) : advance(*requests[i]);
    }
    return false;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i]->frames_decoded += counts[i];
    jobs[i]->audio.insert(jobs[i]->audio.end(), pcm[i].begin(), pcm[i].end());
  }
  return true;
}

StreamChunk EngineCore::take_delta(ActiveRequest& r, size_t tokens_upto) {
  StreamChunk delta;
  delta.index = r.choice;
  if (r.sampling.logprobs >= 0 && tokens_upto > r.delivered) {
    const size_t end = std::min(tokens_upto, r.sampling.logprobs_out.size());
    const size_t begin = std::min(r.delivered, end);
    delta.logprobs.assign(r.sampling.logprobs_out.begin() + static_cast<ptrdiff_t>(begin),
                          r.sampling.logprobs_out.begin() + static_cast<ptrdiff_t>(end));
  }
  if (!r.prompt_logprobs_delivered && r.sampling.prompt_logprobs >= 0 &&
      static_cast<int32_t>(r.sampling.prompt_logprobs_out.size()) >= r.seq.prompt_len - 1) {
    delta.prompt_logprobs = r.sampling.prompt_logprobs_out;
    r.prompt_logprobs_delivered = true;
  }
  if (tokens_upto > r.delivered) {
    delta.tokens = r.reported_tokens(r.delivered, tokens_upto);
    if (r.audio_chat) {
      delta.item_is_frame.assign(r.item_is_frame.begin() + static_cast<ptrdiff_t>(r.delivered),
                                 r.item_is_frame.begin() + static_cast<ptrdiff_t>(tokens_upto));
    }
    r.delivered = tokens_upto;
  }
  delta.text = std::move(r.undelivered_text);
  r.undelivered_text.clear();
  if (r.channel->streams()) {  // a unary request keeps its audio for the Output
    delta.audio_codes.assign(r.frames.begin() + static_cast<ptrdiff_t>(r.frames_delivered), r.frames.end());
    r.frames_delivered = r.frames.size();
    delta.audio = std::move(r.audio);
    r.audio.clear();
  }
  return delta;
}

void EngineCore::advance(ActiveRequest& r) {
  const size_t committed = r.committed_tokens();
  if (r.text) {
    r.push_text(committed);
    if (r.text->stopped()) {
      finish(r, FinishReason::Stop);
      return;
    }
  }
  if (committed <= r.delivered) return;  // a live stream's token waiting for its audio
  if (!r.channel->on_delta(take_delta(r, committed))) finish(r, FinishReason::Abort);  // r is gone after
}

void EngineCore::finish(ActiveRequest& r, FinishReason reason) {
  // A live stream may have sampled at its last audio position before the end of the audio was
  // known: that token is not part of the transcription.
  const int32_t end = r.end_of_audio();
  const size_t keep = static_cast<size_t>(std::max(end, r.seq.prompt_len));
  if (end >= 0 && r.seq.tokens.size() > keep) r.seq.tokens.resize(keep);
  if (r.text) {
    if (!r.text->stopped()) r.push_text(r.seq.tokens.size() - static_cast<size_t>(r.seq.prompt_len));
    r.undelivered_text += r.text->finish();  // text held back for a stop string is final now
  }
  const Output output = make_output(r, reason, Clock::now());
  StreamChunk delta = take_delta(r, output.tokens.size());
  metrics_.record_finish(reason, output.timings, static_cast<int32_t>(output.tokens.size()));
  const std::shared_ptr<detail::RequestChannel> channel = r.channel;
  remove(r);  // r is gone from here on
  channel->on_finish(output, std::move(delta));
}

void EngineCore::fail(ActiveRequest& r, const Error& error) {
  StreamChunk delta = take_delta(r, static_cast<size_t>(r.seq.num_generated()));
  metrics_.record_finish(FinishReason::Error, Timings{}, 0);
  const std::shared_ptr<detail::RequestChannel> channel = r.channel;
  remove(r);
  channel->on_error(error, std::move(delta));
}

void EngineCore::remove(ActiveRequest& r) {
  const std::string id = r.id;  // r (and r.id) die in the erase below
  if (r.parked) --num_parked_;
  if (r.held) {
    for (auto& [lead, held] : held_) {
      const auto it = std::find(held.begin(), held.end(), &r);
      if (it == held.end()) continue;
      held.erase(it);
      --num_held_;
      break;
    }
  }
  release_held(r.seq.id);  // choice 0 ended before its prefill: the others compute the prompt
  scheduler_.remove(&r.seq);
  by_seq_.erase(r.seq.id);
  const auto [first, last] = requests_.equal_range(id);
  for (auto it = first; it != last; ++it) {
    if (it->second.get() == &r) {
      requests_.erase(it);
      break;
    }
  }
  on_done_(id);
  record_queues();
}

void EngineCore::fail_stalled() {
  // Preemption is off and no running sequence can grow: the newest one gives way.
  ActiveRequest* victim = nullptr;
  for (Sequence* seq : scheduler_.running()) {
    ActiveRequest* r = by_seq_.at(seq->id);
    if (victim == nullptr || r->seq.arrival > victim->seq.arrival) victim = r;
  }
  IZWI_CHECK(victim != nullptr, "stalled on memory with no running sequence");
  fail(*victim, Error(ErrorCode::ResourceExhausted,
                      "request '" + victim->id + "': the KV cache is full and preemption is disabled"));
}

bool EngineCore::parkable(const ActiveRequest& r) const {
  return r.takes_audio() && !r.parked && r.seq.status == SequenceStatus::Running && r.seq.runnable_tokens() == 0;
}

int32_t EngineCore::admissible_waiting() const {
  int32_t n = 0;
  for (const auto& [id, r] : requests_) {
    // A held choice waits for its choice 0, not for a batch slot.
    if (!r->parked && !r->held && r->seq.status == SequenceStatus::Waiting && r->seq.runnable_tokens() > 0) ++n;
  }
  return n;
}

void EngineCore::park_idle_streams(Clock::time_point now) {
  if (num_running() < max_batch_size_) return;
  int32_t wanted = admissible_waiting() - (max_batch_size_ - num_running());
  if (wanted <= 0) return;
  // Longest idle first.
  std::vector<ActiveRequest*> idle;
  for (Sequence* seq : scheduler_.running()) {
    ActiveRequest* r = by_seq_.at(seq->id);
    if (parkable(*r) && now - r->last_active >= stream_idle_timeout_) idle.push_back(r);
  }
  std::sort(idle.begin(), idle.end(),
            [](const ActiveRequest* a, const ActiveRequest* b) { return a->last_active < b->last_active; });
  for (ActiveRequest* r : idle) {
    if (wanted-- == 0) break;
    Sequence& seq = r->seq;
    r->parked = true;
    r->parked_computed = seq.num_computed;
    scheduler_.remove(&seq);  // frees its blocks; recomputed like a preempted sequence
    seq.status = SequenceStatus::Waiting;
    seq.num_computed = 0;
    seq.fresh_state = false;
    seq.restore_block = -1;
    ++seq.num_preemptions;
    ++num_parked_;
    logger()->debug("request '{}': parked while waiting for audio", r->id);
  }
  record_queues();
}

void EngineCore::unpark_if_runnable(ActiveRequest& r) {
  if (!r.parked) return;
  const int32_t known = std::min(static_cast<int32_t>(r.seq.tokens.size()), r.seq.input_limit);
  if (known <= r.parked_computed) return;  // still nothing new to compute
  r.parked = false;
  --num_parked_;
  scheduler_.add(&r.seq);
  record_queues();
}

std::optional<Clock::time_point> EngineCore::next_deadline() const {
  if (num_running() < max_batch_size_ || admissible_waiting() == 0) return std::nullopt;
  std::optional<Clock::time_point> first;
  for (Sequence* seq : scheduler_.running()) {
    const ActiveRequest& r = *by_seq_.at(seq->id);
    if (parkable(r) && (!first || r.last_active + stream_idle_timeout_ < *first)) {
      first = r.last_active + stream_idle_timeout_;
    }
  }
  return first;
}

void EngineCore::record_queues() {
  const KVCacheStats stats = cache_.stats();
  metrics_.record_queues(scheduler_.num_waiting() + num_parked_ + num_held_, scheduler_.num_running(),
                         stats.total_blocks, stats.free_blocks, stats.cached_blocks);
}

std::string EngineCore::check_invariants() const {
  std::string problem = cache_.check_invariants();
  if (!problem.empty()) return problem;
  const size_t queued =
      static_cast<size_t>(scheduler_.num_waiting() + scheduler_.num_running() + num_parked_ + num_held_);
  if (queued != requests_.size()) {
    return fmt::format("{} live requests but {} in the scheduler's queues, parked or held", requests_.size(), queued);
  }
  return {};
}

}  // namespace izwi
