#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <numeric>

#include "cache/kv_cache_manager.h"
#include "scheduler/scheduler.h"

namespace izwi {
namespace {

// Drives a Scheduler without a model: every scheduled sample appends a fake token.
class SchedulerHarness {
 public:
  SchedulerHarness(SchedulerConfig config, int32_t num_blocks, int32_t block_size = 4, bool prefix_cache = false)
      : cache_(num_blocks, block_size, prefix_cache, 0), scheduler_(config, cache_) {}

  Sequence* add(int32_t prompt_len, int32_t priority = 0, int32_t first_token = 0) {
    auto seq = std::make_unique<Sequence>();
    seq->id = seq->arrival = next_id_++;
    seq->priority = priority;
    seq->tokens.resize(static_cast<size_t>(prompt_len));
    std::iota(seq->tokens.begin(), seq->tokens.end(), first_token);
    seq->prompt_len = prompt_len;
    scheduler_.add(seq.get());
    seqs_.push_back(std::move(seq));
    return seqs_.back().get();
  }

  ScheduleResult step() {
    ScheduleResult r = scheduler_.schedule();
    scheduler_.complete(r);
    for (const ScheduledSequence& s : r.scheduled) {
      if (s.sample) s.seq->tokens.push_back(1000);
    }
    EXPECT_EQ(cache_.check_invariants(), "");
    return r;
  }

  Scheduler& scheduler() { return scheduler_; }
  KVCacheManager& cache() { return cache_; }

 private:
  KVCacheManager cache_;
  Scheduler scheduler_;
  std::deque<std::unique_ptr<Sequence>> seqs_;
  uint64_t next_id_ = 1;
};

int32_t tokens_for(const ScheduleResult& r, const Sequence* seq) {
  for (const auto& s : r.scheduled) {
    if (s.seq == seq) return s.num_tokens;
  }
  return 0;
}

SchedulerConfig config(int32_t batch, int32_t budget, bool chunked = true, bool preemption = true,
                       SchedulingPolicy policy = SchedulingPolicy::Fcfs) {
  SchedulerConfig c;
  c.max_batch_size = batch;
  c.max_tokens_per_step = budget;
  c.enable_chunked_prefill = chunked;
  c.enable_preemption = preemption;
  c.policy = policy;
  return c;
}

TEST(Scheduler, ChunkedPrefillSplitsTheTokenBudgetExactly) {
  SchedulerHarness h(config(8, 10), 64);
  Sequence* a = h.add(25);
  Sequence* b = h.add(7);
  ScheduleResult r1 = h.step();
  EXPECT_EQ(tokens_for(r1, a), 10);  // a takes the whole budget
  EXPECT_EQ(tokens_for(r1, b), 0);
  EXPECT_FALSE(r1.scheduled[0].sample);
  ScheduleResult r2 = h.step();
  EXPECT_EQ(tokens_for(r2, a), 10);
  EXPECT_EQ(tokens_for(r2, b), 0);
  ScheduleResult r3 = h.step();
  EXPECT_EQ(tokens_for(r3, a), 5);  // last chunk, samples
  EXPECT_EQ(tokens_for(r3, b), 5);  // b's first chunk fills the rest of the budget
  EXPECT_EQ(r3.num_tokens, 10);
  ScheduleResult r4 = h.step();
  EXPECT_EQ(tokens_for(r4, a), 1);  // decode first
  EXPECT_EQ(tokens_for(r4, b), 2);  // then the rest of b's prompt
}

TEST(Scheduler, WithoutChunkingAPromptRunsWholeOrWaits) {
  SchedulerHarness h(config(8, 10, /*chunked=*/false), 64);
  Sequence* a = h.add(6);
  Sequence* b = h.add(6);
  Sequence* huge = h.add(30);  // longer than the whole budget
  ScheduleResult r1 = h.step();
  EXPECT_EQ(tokens_for(r1, a), 6);
  EXPECT_EQ(tokens_for(r1, b), 0);  // does not fit the rest of the budget: waits whole
  ScheduleResult r2 = h.step();
  EXPECT_EQ(tokens_for(r2, a), 1);
  EXPECT_EQ(tokens_for(r2, b), 6);
  EXPECT_EQ(tokens_for(r2, huge), 0);
  h.scheduler().remove(a);
  h.scheduler().remove(b);
  ScheduleResult r3 = h.step();
  EXPECT_EQ(tokens_for(r3, huge), 30);  // alone, it runs whole past the budget
}

TEST(Scheduler, MaxBatchSizeLimitsRunningSequences) {
  SchedulerHarness h(config(2, 100), 64);
  h.add(3);
  h.add(3);
  Sequence* c = h.add(3);
  ScheduleResult r = h.step();
  EXPECT_EQ(r.scheduled.size(), 2u);
  EXPECT_EQ(tokens_for(r, c), 0);
  EXPECT_EQ(h.scheduler().num_waiting(), 1);
}

TEST(Scheduler, PriorityPolicyAdmitsHigherPriorityFirstWithArrivalTieBreak) {
  SchedulerHarness h(config(2, 100, true, true, SchedulingPolicy::Priority), 64);
  Sequence* low = h.add(3, 0);
  Sequence* high_first = h.add(3, 5);
  Sequence* high_second = h.add(3, 5);
  ScheduleResult r = h.step();
  EXPECT_EQ(tokens_for(r, high_first), 3);
  EXPECT_EQ(tokens_for(r, high_second), 3);
  EXPECT_EQ(tokens_for(r, low), 0);
  ASSERT_EQ(r.scheduled.size(), 2u);
  EXPECT_EQ(r.scheduled[0].seq, high_first);
}

TEST(Scheduler, FcfsAdmitsByArrivalIgnoringPriority) {
  SchedulerHarness h(config(1, 100), 64);
  Sequence* first = h.add(3, 0);
  h.add(3, 9);
  ScheduleResult r = h.step();
  ASSERT_EQ(r.scheduled.size(), 1u);
  EXPECT_EQ(r.scheduled[0].seq, first);
}

TEST(Scheduler, NoPreemptionWhileSpaceExists) {
  SchedulerHarness h(config(8, 100), 16);
  for (int i = 0; i < 4; ++i) h.add(5);
  for (int step = 0; step < 6; ++step) EXPECT_TRUE(h.step().preempted.empty());
}

TEST(Scheduler, PreemptsLowestPriorityLatestArrivalWhenBlocksRunOut) {
  // 4 blocks of 4 positions. Three 4-token prompts take three blocks; in the next step each
  // needs a second block and only one is free.
  SchedulerHarness h(config(8, 100, true, true, SchedulingPolicy::Priority), 4);
  Sequence* a = h.add(4, 1);
  Sequence* b = h.add(4, 0);  // lowest priority, earlier
  Sequence* c = h.add(4, 0);  // lowest priority, latest: the victim
  h.step();
  ScheduleResult r = h.step();
  EXPECT_EQ(tokens_for(r, a), 1);  // takes the free block
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0], c);  // b's growth evicts c, not a
  EXPECT_EQ(tokens_for(r, b), 1);
  EXPECT_EQ(tokens_for(r, c), 0);
  EXPECT_EQ(c->num_computed, 0);
  EXPECT_EQ(c->num_preemptions, 1);
  EXPECT_EQ(c->status, SequenceStatus::Waiting);
  EXPECT_FALSE(h.cache().has(c->id));
  // Once space returns the victim recomputes its prompt and its generated token.
  h.scheduler().remove(a);
  ScheduleResult resume = h.step();
  EXPECT_EQ(tokens_for(resume, b), 1);
  EXPECT_EQ(tokens_for(resume, c), 5);
}

TEST(Scheduler, SequenceThatIsItsOwnBestVictimYieldsItself) {
  SchedulerHarness h(config(8, 100), 2);
  Sequence* old_seq = h.add(3);
  Sequence* young = h.add(4);
  h.step();  // one block each; only young's next position needs a new block
  ScheduleResult r = h.step();
  ASSERT_EQ(r.preempted.size(), 1u);
  EXPECT_EQ(r.preempted[0], young);
  EXPECT_EQ(tokens_for(r, old_seq), 1);
  EXPECT_EQ(tokens_for(r, young), 0);
}

TEST(Scheduler, WithoutPreemptionAFullPoolStalls) {
  SchedulerHarness h(config(8, 100, true, /*preemption=*/false), 2);
  h.add(4);
  h.add(4);
  h.step();
  ScheduleResult r = h.step();
  EXPECT_TRUE(r.scheduled.empty());
  EXPECT_TRUE(r.stalled_on_memory);
}

TEST(Scheduler, OneHugeRequestDoesNotBlockTheQueueForever) {
  // The huge request needs most of the pool; small requests keep arriving behind it.
  SchedulerHarness h(config(4, 16), 12);
  Sequence* small_running = h.add(8);
  h.step();
  Sequence* huge = h.add(40);  // 10 blocks of 12
  std::vector<Sequence*> later;
  for (int i = 0; i < 3; ++i) later.push_back(h.add(4));
  for (int step = 0; step < 200 && (huge->num_generated() < 1); ++step) {
    h.step();
    if (small_running->num_generated() >= 6 && small_running->status == SequenceStatus::Running) {
      h.scheduler().remove(small_running);
    }
    for (Sequence* s : later) {
      if (s->status == SequenceStatus::Running && s->num_generated() >= 2) h.scheduler().remove(s);
    }
  }
  EXPECT_GE(huge->num_generated(), 1);
}

TEST(Scheduler, InputLimitedSequenceWaitsWithoutBlockingOthers) {
  SchedulerHarness h(config(8, 100), 32);
  Sequence* stream = h.add(6);
  stream->input_limit = 0;  // no audio has arrived yet
  Sequence* text = h.add(3);
  ScheduleResult r = h.step();
  EXPECT_EQ(tokens_for(r, stream), 0);
  EXPECT_EQ(tokens_for(r, text), 3);
  stream->input_limit = 4;
  r = h.step();
  EXPECT_EQ(tokens_for(r, stream), 4);
  EXPECT_FALSE(r.scheduled[1].sample);
}

TEST(Scheduler, PrefixHitShortensThePrefill) {
  SchedulerHarness h(config(8, 100), 32, 4, /*prefix_cache=*/true);
  Sequence* a = h.add(10);
  h.step();
  h.scheduler().remove(a);
  Sequence* b = h.add(10);  // same tokens
  ScheduleResult r = h.step();
  EXPECT_EQ(b->prefix_hit_tokens, 8);
  EXPECT_EQ(tokens_for(r, b), 2);
}

}  // namespace
}  // namespace izwi
