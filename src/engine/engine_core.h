#pragma once
// One engine step on the worker thread: schedule, execute, process. Single-threaded; the
// façade (EngineImpl) feeds it commands between steps.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "cache/kv_cache_manager.h"
#include "engine/active_request.h"
#include "engine/metrics_collector.h"
#include "executor/model_executor.h"
#include "izwi/config.h"
#include "scheduler/scheduler.h"

namespace izwi {

class EngineCore {
 public:
  /// `on_done(id)` runs when a request (each choice of it) leaves the engine (finished, aborted or failed).
  EngineCore(std::unique_ptr<ModelExecutor> executor, const EngineConfig& config, MetricsCollector& metrics,
             std::function<void(const std::string&)> on_done);

  /// Queues a request. A choice after the first (GenerationParams::n) waits out of the scheduler
  /// until choice 0 has computed the prompt, so that its admission takes the prompt's full blocks
  /// from the prefix cache instead of computing them again in the same steps.
  void add(std::unique_ptr<ActiveRequest> request);
  /// Ends every choice of a live request with FinishReason::Abort; unknown ids are ignored.
  void abort(const std::string& id);
  void abort_all();
  /// Speech requests: audio samples at the model's rate, and the end of the audio. Requests no
  /// longer live are ignored (they may have ended on EOS).
  void push_audio(const std::string& id, const std::vector<float>& samples);
  void finish_audio(const std::string& id);
  /// Ends every live request with `error` (used when a step fails outside the model).
  void fail_all(const Error& error);
  /// Runs one step. Returns false when nothing could be done (all live requests wait for input).
  bool step();
  /// When the worker must step again although no command came: the moment an idle live stream
  /// may be parked to make room for a waiting request (EngineConfig::stream_idle_timeout_ms).
  std::optional<Clock::time_point> next_deadline() const;

  bool has_unfinished() const { return !requests_.empty(); }
  /// The live request with this id (its first live choice), or nullptr.
  const ActiveRequest* find(const std::string& id) const;
  int32_t num_waiting() const { return scheduler_.num_waiting(); }
  int32_t num_running() const { return scheduler_.num_running(); }
  const KVCacheManager& cache() const { return cache_; }
  /// KV events of the prefix cache, recorded only while `on` (KVCacheManager::record_kv_events).
  void record_kv_events(bool on) { cache_.record_kv_events(on); }
  std::vector<KvEvent> take_kv_events() { return cache_.take_kv_events(); }
  /// Empty when every invariant of the cache and the queues holds.
  std::string check_invariants() const;

 private:
  void finish(ActiveRequest& request, FinishReason reason);
  void fail(ActiveRequest& request, const Error& error);
  /// Hands newly committed tokens, their text, audio and frames to the caller (finishing on a
  /// stop string).
  void advance(ActiveRequest& request);
  /// What the caller has not seen yet: tokens up to `tokens_upto`, text, frames and audio.
  StreamChunk take_delta(ActiveRequest& request, size_t tokens_upto);
  /// Runs the codec over the new frames of this step's speech requests. On a codec failure the
  /// decoding requests fail and every other request of the step is finished or advanced here;
  /// returns false then.
  bool decode_audio(const std::vector<ActiveRequest*>& requests, const std::vector<FinishReason>& reasons);
  /// Frees the request's cache, forgets it and reports it done; the caller is resolved after.
  void remove(ActiveRequest& request);
  void fail_stalled();
  /// Live streams that wait for audio give their batch slot to requests waiting for one, once idle
  /// for stream_idle_timeout_ms: out of the scheduler, KV freed (recomputed from the kept audio
  /// embeddings when their audio comes, as after a preemption).
  void park_idle_streams(Clock::time_point now);
  /// Requests waiting for a batch slot with positions they could compute now.
  int32_t admissible_waiting() const;
  bool parkable(const ActiveRequest& r) const;
  void unpark_if_runnable(ActiveRequest& r);
  /// Whether `r` (a choice after the first) should wait for choice 0's prefill; holds it if so.
  bool hold_for_first_choice(ActiveRequest& r);
  /// Queues the choices held for the sequence `first_choice_seq`.
  void release_held(uint64_t first_choice_seq);
  void record_queues();

  std::unique_ptr<ModelExecutor> executor_;
  KVCacheManager cache_;
  Scheduler scheduler_;
  MetricsCollector& metrics_;
  std::function<void(const std::string&)> on_done_;
  /// By request id; the choices of one request share it.
  std::unordered_multimap<std::string, std::unique_ptr<ActiveRequest>> requests_;
  /// Choices held until the prefill of choice 0 (keyed by its sequence id) is done.
  std::unordered_map<uint64_t, std::vector<ActiveRequest*>> held_;
  int32_t num_held_ = 0;
  std::unordered_map<uint64_t, ActiveRequest*> by_seq_;
  uint64_t next_seq_id_ = 1;
  int32_t max_batch_size_;
  Clock::duration stream_idle_timeout_;
  int32_t num_parked_ = 0;
};

}  // namespace izwi
