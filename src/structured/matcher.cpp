#include "structured/matcher.h"

#include <utility>

#include "common/check.h"

namespace izwi::structured {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)), stacks_(std::make_shared<StackPool>()), parser_(*grammar_) {
  history_.emplace_back();
  parser_.start(*stacks_, history_.back());
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  const ParseState* at = &history_.back();
  int next = 0;
  for (const char c : bytes) {
    ParseState& after = scratch_[next];
    if (!parser_.advance(*stacks_, *at, static_cast<uint8_t>(c), after)) return false;
    if (after.threads.empty() && !after.complete) return false;
    at = &after;
    next ^= 1;
  }
  history_.push_back(*at);
  return true;
}

void GrammarMatcher::rollback(size_t steps) {
  IZWI_CHECK(steps <= num_steps(), "rollback of {} steps after {}", steps, num_steps());
  history_.resize(history_.size() - steps);
}

}  // namespace izwi::structured
