#include "scheduler/scheduler.h"

#include <algorithm>

#include "common/check.h"

namespace izwi {

Scheduler::Scheduler(const SchedulerConfig& config, KVCacheManager& cache)
    : config_(config), order_(config.policy), cache_(cache), waiting_(order_) {}

void Scheduler::add(Sequence* seq) {
  seq->status = SequenceStatus::Waiting;
  waiting_.insert(seq);
}

void Scheduler::remove(Sequence* seq) {
  waiting_.erase(seq);
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  cache_.free(seq->id);
  seq->status = SequenceStatus::Finished;
}

ScheduleResult Scheduler::schedule() {
  ScheduleResult result;
  int32_t budget = config_.max_tokens_per_step;
  std::vector<Sequence*> order = running_;
  std::sort(order.begin(), order.end(), order_);
  std::set<const Sequence*> done;  // scheduled or preempted in this step
  bool memory_short = false;
  for (Sequence* seq : order) {
    if (budget == 0) break;
    if (done.count(seq) != 0) continue;
    if (!schedule_running(seq, &result, &budget, &done)) memory_short = true;
  }
  // As in vLLM: a step that had to preempt admits nobody new.
  if (result.preempted.empty()) admit_waiting(&result, &budget);
  result.stalled_on_memory = result.scheduled.empty() && memory_short;
  return result;
}

bool Scheduler::schedule_running(Sequence* seq, ScheduleResult* result, int32_t* budget,
                                 std::set<const Sequence*>* done) {
  const int32_t n = std::min(seq->runnable_tokens(), *budget);
  if (n == 0) return true;  // waiting for input (streamed audio)
  if (cache_.blocks_for(seq->num_computed + n) > cache_.num_blocks()) {
    result->unfittable.push_back(seq);  // a stream grew past the whole pool
    done->insert(seq);
    return true;
  }
  while (true) {
    if (cache_.allocate(seq->id, seq->num_computed, seq->num_computed + n, nullptr, &result->block_copies)) {
      const bool sample = seq->num_computed + n == static_cast<int32_t>(seq->tokens.size());
      result->scheduled.push_back(ScheduledSequence{seq, n, sample});
      result->num_tokens += n;
      *budget -= n;
      done->insert(seq);
      return true;
    }
    if (!config_.enable_preemption) return false;
    Sequence* victim = nullptr;
    for (Sequence* candidate : running_) {
      if (done->count(candidate) == 0 && (victim == nullptr || better_victim(candidate, victim))) victim = candidate;
    }
    IZWI_CHECK(victim != nullptr, "no preemption victim although sequence {} is running", seq->id);
    preempt(victim, result);
    done->insert(victim);
    if (victim == seq) return true;
  }
}

void Scheduler::admit_waiting(ScheduleResult* result, int32_t* budget) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (static_cast<int32_t>(running_.size()) >= config_.max_batch_size || *budget == 0) break;
    Sequence* seq = *it;
    const int32_t known = std::min(static_cast<int32_t>(seq->tokens.size()), seq->input_limit);
    const PrefixMatch match = cache_.match_prefix(seq->tokens, seq->cacheable_len);
    const int32_t available = known - match.num_tokens;
    if (available <= 0) {
      ++it;  // nothing to compute yet; do not hold up the queue
      continue;
    }
    int32_t n = std::min(available, *budget);
    if (n < available && !config_.enable_chunked_prefill) {
      // Without chunking a prompt runs whole; one longer than the budget runs alone.
      if (!result->scheduled.empty()) break;
      n = available;
    }
    if (!cache_.allocate(seq->id, match.num_tokens, match.num_tokens + n, &match, &result->block_copies)) break;
    it = waiting_.erase(it);
    running_.push_back(seq);
    seq->status = SequenceStatus::Running;
    seq->num_computed = match.num_tokens;
    if (!seq->admitted_before) seq->prefix_hit_tokens = match.num_tokens;
    seq->admitted_before = true;
    seq->fresh_state = true;
    seq->restore_block = match.last_block();
    const bool sample = match.num_tokens + n == static_cast<int32_t>(seq->tokens.size());
    result->scheduled.push_back(ScheduledSequence{seq, n, sample});
    result->num_tokens += n;
    *budget -= n;
  }
}

void Scheduler::preempt(Sequence* seq, ScheduleResult* result) {
  cache_.free(seq->id);
  running_.erase(std::remove(running_.begin(), running_.end(), seq), running_.end());
  seq->num_computed = 0;
  seq->fresh_state = false;
  seq->restore_block = -1;
  ++seq->num_preemptions;
  seq->status = SequenceStatus::Waiting;
  waiting_.insert(seq);
  result->preempted.push_back(seq);
}

void Scheduler::complete(const ScheduleResult& result) {
  for (const ScheduledSequence& s : result.scheduled) {
    s.seq->num_computed += s.num_tokens;
    s.seq->fresh_state = false;
    cache_.commit(s.seq->id, s.seq->tokens, std::min(s.seq->num_computed, s.seq->cacheable_len));
  }
}

}  // namespace izwi
