#pragma once
// Orders sequences for admission and picks preemption victims.

#include "izwi/config.h"
#include "scheduler/sequence.h"

namespace izwi {

class SchedulingOrder {
 public:
  explicit SchedulingOrder(SchedulingPolicy policy) : policy_(policy) {}
  /// True if `a` should be served before `b`: FCFS by arrival; Priority by larger priority, then arrival.
  bool operator()(const Sequence* a, const Sequence* b) const {
    if (policy_ == SchedulingPolicy::Priority && a->priority != b->priority) return a->priority > b->priority;
    return a->arrival < b->arrival;
  }

 private:
  SchedulingPolicy policy_;
};

/// True if `a` is a better preemption victim than `b`: lower priority, then later arrival.
inline bool better_victim(const Sequence* a, const Sequence* b) {
  if (a->priority != b->priority) return a->priority < b->priority;
  return a->arrival > b->arrival;
}

}  // namespace izwi
