#pragma once
// Decides each step's batch: running sequences first (decode, or the next prefill chunk),
// then waiting ones, within max_batch_size and the per-step token budget. Asks the
// KVCacheManager for blocks; when they run out it preempts the lowest-priority, latest
// sequence (blocks freed, requeued to recompute). Prefix-cache hits shorten prefills.

#include <cstdint>
#include <set>
#include <vector>

#include "cache/kv_cache_manager.h"
#include "izwi/config.h"
#include "scheduler/schedule_result.h"
#include "scheduler/scheduling_policy.h"
#include "scheduler/sequence.h"

namespace izwi {

struct SchedulerConfig {
  int32_t max_batch_size = 8;
  int32_t max_tokens_per_step = 512;
  bool enable_chunked_prefill = true;
  bool enable_preemption = true;
  SchedulingPolicy policy = SchedulingPolicy::Fcfs;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, KVCacheManager& cache);

  /// Queues a new sequence (status Waiting). The sequence must outlive its time in the scheduler.
  void add(Sequence* seq);
  /// Takes a sequence out (finished or aborted) and frees its cache. Idempotent.
  void remove(Sequence* seq);
  /// Plans one step. Scheduled sequences have their blocks; call complete() after executing.
  ScheduleResult schedule();
  /// Records that the planned positions were computed and offers full blocks to the prefix cache.
  void complete(const ScheduleResult& result);

  int32_t num_waiting() const { return static_cast<int32_t>(waiting_.size()); }
  int32_t num_running() const { return static_cast<int32_t>(running_.size()); }
  bool empty() const { return waiting_.empty() && running_.empty(); }
  const std::vector<Sequence*>& running() const { return running_; }

 private:
  void preempt(Sequence* seq, ScheduleResult* result);
  bool schedule_running(Sequence* seq, ScheduleResult* result, int32_t* budget, std::set<const Sequence*>* done);
  void admit_waiting(ScheduleResult* result, int32_t* budget);

  SchedulerConfig config_;
  SchedulingOrder order_;
  KVCacheManager& cache_;
  std::vector<Sequence*> running_;
  std::set<Sequence*, SchedulingOrder> waiting_;
};

}  // namespace izwi
